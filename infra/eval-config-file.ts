/**
 * Reads a vero.yaml: CLI flags are an overlay applied before validation (so an override is checked exactly like
 * the file); relative paths resolve against the file.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { commandArgv } from '../model/command-line';
import { formatZodIssues } from '../model/config-issues';
import { ConfigError } from '../model/errors';
import { EvalConfig, EvalConfigFile, setPath } from '../model/evaluation/config';
import { MAX_CONFIG_BYTES, readRegularText } from './bounded-read';

export type { EvalConfig };

export function defaultHome(): string {
  return process.env.VERO_HOME ?? path.join(os.homedir(), '.vero');
}

function resolveFrom(base: string, p: string): string {
  const expanded = p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
  return path.resolve(base, expanded);
}

/**
 * Loads and validates a vero.yaml. `overrides` maps dotted paths to values (from CLI flags) and is applied
 * before validation, so an override is checked exactly like the file; `flags` names the flag of each path, so
 * its problems are blamed on the flag.
 */
export function loadEvalConfig(
  file: string | null,
  overrides: Record<string, unknown> = {},
  flags: Record<string, string> = {},
): EvalConfig {
  let raw: unknown = {};
  if (file) {
    let text: string;
    try {
      text = readRegularText(file, { maxBytes: MAX_CONFIG_BYTES });
    } catch (e) {
      throw new ConfigError(`${file}: cannot read the config file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (e) {
      throw new ConfigError(`${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${file}: expected a mapping at the top level`);
  }
  const obj = structuredClone(raw) as Record<string, unknown>;
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) setPath(obj, k, v);
  return configFrom(obj, file, file ?? 'command line', overrides, flags);
}

/**
 * A config built by code (the sidecar's Mode B evaluations), validated by the same schema as a vero.yaml and
 * resolved the same way: its settings come from the same builder (client/eval-input.ts settingsFrom).
 */
export function evalConfigOf(raw: Record<string, unknown>, where = 'settings'): EvalConfig {
  return configFrom(structuredClone(raw), null, where, {}, {});
}

function configFrom(
  obj: Record<string, unknown>,
  file: string | null,
  where: string,
  overrides: Record<string, unknown>,
  flags: Record<string, string>,
): EvalConfig {
  const parsed = EvalConfigFile.safeParse(obj);
  // An override's problem is the flag's that set it (`flags`: dotted path → flag name), not the file's.
  const setBy = Object.fromEntries(Object.entries(flags).filter(([p]) => overrides[p] !== undefined));
  if (!parsed.success) throw new ConfigError(formatZodIssues(parsed.error.issues, where, EvalConfigFile, setBy));
  const cfg = parsed.data;
  const base = file ? path.dirname(path.resolve(file)) : process.cwd();
  const src = cfg.tasks.source;
  // A launcher given as a relative path ("./bin/harbor") is relative to the config file, like every path in it.
  const cmd = commandArgv(cfg.harbor.command);
  if (cmd[0]!.includes('/') && !path.isAbsolute(cmd[0]!) && !cmd[0]!.includes('{worktree}')) cmd[0] = resolveFrom(base, cmd[0]!);
  return {
    ...cfg,
    harbor: { ...cfg.harbor, command: cmd },
    agent_repo: resolveFrom(base, cfg.agent_repo),
    tasks: {
      ...cfg.tasks,
      source: {
        ...src,
        ...(src.path ? { path: resolveFrom(base, src.path) } : {}),
        ...(src.registry_path ? { registry_path: resolveFrom(base, src.registry_path) } : {}),
      },
      ...(cfg.tasks.partition ? { partition: { ...cfg.tasks.partition, file: resolveFrom(base, cfg.tasks.partition.file) } } : {}),
    },
    home: cfg.home ? resolveFrom(base, cfg.home) : defaultHome(),
    configFile: file ? path.resolve(file) : null,
  };
}
