/** Options shared by several commands, and how they overlay vero.yaml. */
import { DURATION_FORMS, DurationSeconds } from '../model/durations';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { EvalConfig, TEMPORAL_DEFAULTS } from '../model/evaluation/config';
import { loadEvalConfig } from '../infra/eval-config-file';
import { ConfigError } from '../model/errors';
import type { Client } from '@temporalio/client';
import { connect } from '../client/connection';

export interface ConnectionFlags {
  config?: string;
  address?: string;
  namespace?: string;
  taskQueue?: string;
  uiUrl?: string;
}

export function withConnection(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'vero.yaml (default: the nearest vero.yaml in this directory or a parent)')
    .addOption(new Option('--address <host:port>', 'Temporal frontend address').env('VERO_TEMPORAL_ADDRESS'))
    .addOption(new Option('--namespace <ns>', 'Temporal namespace').env('VERO_TEMPORAL_NAMESPACE'))
    .addOption(new Option('--task-queue <queue>', 'Temporal task queue').env('VERO_TASK_QUEUE'))
    .addOption(new Option('--ui-url <url>', 'Temporal Web UI base URL, for links').env('VERO_UI_URL'));
}

/**
 * The vero.yaml a command uses: -c, else the nearest `vero.yaml` in the working directory or a parent of it
 * (as git finds its repo), stopping at the filesystem root; null when there is none.
 */
export function configPath(flags: { config?: string }, from = process.cwd()): string | null {
  if (flags.config) return flags.config;
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'vero.yaml');
    if (fs.existsSync(file)) return path.relative(process.cwd(), file) || 'vero.yaml';
    if (path.dirname(dir) === dir) return null;
  }
}

const loaded = new Map<string, EvalConfig>();

/**
 * The vero.yaml of this command, read once per process (`vero list` needs it for its connection and for its
 * digest scope): the same file gives the same parsed config. Overridden loads (start-eval's flags) are not cached.
 */
export function commandConfig(file: string): EvalConfig {
  const key = path.resolve(file);
  if (!loaded.has(key)) loaded.set(key, loadEvalConfig(file));
  return loaded.get(key)!;
}

/**
 * Where the address came from, said with the server it names: `--address`, `VERO_TEMPORAL_ADDRESS` (commander
 * fills the flag from it), the config file, or the default; and the config's own address when one of the first
 * two overrode it.
 */
function addressOrigin(flags: ConnectionFlags, file: string | null, fileAddress: string | undefined): string {
  if (flags.address === undefined) return file && fileAddress ? `from ${file}` : 'the default';
  const typed = process.argv.some((a) => a === '--address' || a.startsWith('--address='));
  const from = !typed && process.env.VERO_TEMPORAL_ADDRESS === flags.address ? 'VERO_TEMPORAL_ADDRESS' : '--address';
  return fileAddress && fileAddress !== flags.address ? `from ${from}, over ${file}'s ${fileAddress}` : `from ${from}`;
}

/**
 * Connection settings: flags > environment (VERO_TEMPORAL_ADDRESS, …) > vero.yaml > defaults (no config file
 * needed); `addressFrom` says which gave the address.
 */
export function connectionSettings(flags: ConnectionFlags): {
  address: string;
  namespace: string;
  taskQueue: string;
  uiUrl: string | null;
  addressFrom: string;
} {
  let fromFile: EvalConfig['temporal'] | undefined;
  const file = configPath(flags);
  if (file) {
    try {
      fromFile = commandConfig(file).temporal;
    } catch (e) {
      if (flags.config) throw e;
    }
  }
  const address = flags.address ?? fromFile?.address ?? TEMPORAL_DEFAULTS.address;
  return {
    address,
    addressFrom: addressOrigin(flags, file, fromFile?.address),
    namespace: flags.namespace ?? fromFile?.namespace ?? TEMPORAL_DEFAULTS.namespace,
    taskQueue: flags.taskQueue ?? fromFile?.task_queue ?? TEMPORAL_DEFAULTS.task_queue,
    uiUrl: flags.uiUrl ?? defaultUiUrl(address),
  };
}

/** The dev server serves its UI at port + 1000 on loopback. */
function defaultUiUrl(address: string): string | null {
  const m = /^(127\.0\.0\.1|localhost):(\d+)$/.exec(address);
  return m ? `http://${m[1]}:${Number(m[2]) + 1000}` : null;
}

/** A duration flag (`90s`, `30m`, `2h`, `1d`, or seconds), as seconds. */
export function parseDurationFlag(name: string) {
  return (v: string): number => {
    const r = DurationSeconds.safeParse(/^\d+(\.\d+)?$/.test(v) ? Number(v) : v);
    if (!r.success) throw new ConfigError(`${name}: expected a duration: ${DURATION_FORMS}; got "${v}"`);
    return r.data;
  };
}

/**
 * Connects to the server these settings name, and says which on stderr (human output only): state is never
 * read from another server without the user seeing it.
 */
export async function connectTo(conn: { address: string; namespace: string; addressFrom?: string }, json?: boolean): Promise<Client> {
  if (!json)
    process.stderr.write(`server ${conn.address}${conn.addressFrom ? ` (${conn.addressFrom})` : ''} · namespace ${conn.namespace}\n`);
  return connect(conn.address, conn.namespace);
}
