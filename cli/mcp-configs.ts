/**
 * Which vero.yaml files `vero mcp` lets its client evaluate with: the `-c` file it was started with, and those
 * the operator lists with `--allow-config`; nothing else. A config runs commands (`harbor.command`) as the
 * worker's user, so a client naming any path would run what it wrote. A path outside the list is refused by its
 * name only: the file is never opened, so nothing of it is echoed back (docs/mcp.md).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../model/errors';

export interface AllowedConfigs {
  /** The config a tool uses when its input names none (`-c`, or the nearest vero.yaml); null: none. */
  default: string | null;
  /** The real paths of every allowed config, to the path the operator gave. */
  byRealPath: Map<string, string>;
}

function realPath(file: string): string | null {
  try {
    return fs.realpathSync(path.resolve(file));
  } catch {
    return null;
  }
}

/** The allow-list from the command line; an allowed file that does not exist is the operator's mistake (exit 2). */
export function allowedConfigs(defaultFile: string | null, extra: string[] = []): AllowedConfigs {
  const byRealPath = new Map<string, string>();
  for (const f of [...(defaultFile ? [defaultFile] : []), ...extra]) {
    const real = realPath(f);
    if (!real) throw new ConfigError(`${f === defaultFile ? '-c' : '--allow-config'}: ${f}: no such file`);
    byRealPath.set(real, f);
  }
  return { default: defaultFile, byRealPath };
}

/** The config a tool call may use: the default when it names none, else one on the list; refused otherwise. */
export function allowedConfig(allowed: AllowedConfigs, given: string | undefined): string {
  if (given === undefined) {
    if (allowed.default) return allowed.default;
    throw new ConfigError('config: this server was started without a config (vero mcp -c FILE); name one it allows');
  }
  const real = realPath(given);
  const file = real ? allowed.byRealPath.get(real) : undefined;
  if (file) return file;
  const list = [...allowed.byRealPath.values()];
  throw new ConfigError(
    `config: ${given.slice(0, 200)} is not a config this server allows (${list.length ? list.join(', ') : 'none'}); the operator allows more with vero mcp --allow-config FILE`,
  );
}

/** A tool's `config` input: optional, one the server allows. */
export const configInput = z
  .string()
  .min(1)
  .optional()
  .describe('path of the vero.yaml: only the one vero mcp was started with (-c, the default) or one the operator allowed (--allow-config)');
