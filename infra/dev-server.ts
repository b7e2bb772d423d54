/** Starts `temporal server start-dev` (SQLite, optional Web UI) with the project's search attributes. */
import { procCmdline } from './proc';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { Connection } from '@temporalio/client';
import { searchAttributeArgs } from '../model/evaluation/search-attributes';
import { ConfigError, InfrastructureError } from '../model/errors';
import { processAlive } from './process-alive';
import { TEMPORAL_DEFAULTS } from '../model/evaluation/config';
import { devServerPidFile } from '../model/paths';
import { writeFileDurable } from './atomic-file';
import { readJson } from './json-file';

export interface DevServerOptions {
  temporalCli: string;
  ip?: string;
  port?: number;
  /** Serve the Web UI on this port (default port+1000); omit `ui` for headless. */
  ui?: boolean;
  uiPort?: number;
  /** The SQLite file; in memory when unset. */
  dbFile?: string;
  /**
   * How the SQLite file is flushed (it is always in WAL mode). `normal` (the default): a commit is not fsynced; a
   * crash of the server or of anything else loses nothing, a power loss or an OS crash may lose the commits since
   * the last checkpoint (the file stays consistent). `full`: every commit is fsynced.
   */
  dbSync?: DbSync;
  namespace?: string;
  logFile?: string;
  startTimeoutMs?: number;
  /** Told the server's pid as soon as it is spawned (its process group), before it is ready: to kill it on a second Ctrl-C. */
  onSpawn?: (pid: number) => void;
}

export const DB_SYNC_MODES = ['normal', 'full'] as const;
export type DbSync = (typeof DB_SYNC_MODES)[number];

/**
 * SQLite's pragmas for the dev server's file. The CLI's default is a rollback journal with every commit fsynced
 * (a journal file created, synced and deleted per transaction): in WAL mode with `synchronous=normal` the server
 * spends 20–30 % less CPU per task (3.9 against 5.0–5.8 CPU-s for 200 stand-in tasks, 2 cores), which on a small machine is CPU the harbor
 * processes need.
 */
function sqlitePragmaArgs(sync: DbSync = 'normal'): string[] {
  return ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', `synchronous=${sync}`];
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  pid: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/**
 * A dev server left running on this SQLite file (its owner was SIGKILLed; the server is a detached group)
 * would share the file with a new one and corrupt its state: stop it first. Returns its pid, if there was one.
 * A server whose owner (the vero process that started it) is alive is not stale: that is refused, naming it.
 */
async function stopStaleServer(dbFile: string): Promise<number | null> {
  const record = readJson<{ pid: number; port?: number; ownerPid?: number }>(devServerPidFile(dbFile));
  if (record === null) return null;
  const pid = record.pid;
  const alive = () => procCmdline(pid).includes('start-dev') && procCmdline(pid).includes(dbFile);
  if (!alive()) return null;
  const owner = record.ownerPid;
  if (owner && owner !== process.pid && processAlive(owner))
    throw new ConfigError(
      `${dbFile}: in use by a running dev server (pid ${pid}, port ${record.port ?? '?'}) of vero process ${owner} (${procCmdline(owner).slice(0, 120) || 'unknown command'}); stop that one first, or use another --db`,
    );
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      /* gone */
    }
  };
  signal('SIGTERM');
  for (let i = 0; i < 200 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
  if (alive()) signal('SIGKILL');
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
  return pid;
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  if (opts.dbFile) await stopStaleServer(opts.dbFile);
  const port = opts.port ?? (await freePort());
  // Something already listening there would answer our readiness checks and take our worker: refuse.
  if (await canConnect(ip, port))
    throw new ConfigError(`port ${ip}:${port} is already in use (another Temporal server?); pass another --port, or stop it`);
  const args = serverArgs(ip, port, opts);
  const uiUrl = await webUiArgs(ip, port, opts, args);
  const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'ignore';
  const child = spawn(opts.temporalCli, args, { stdio: ['ignore', out, out], detached: true });
  if (typeof out === 'number') fs.closeSync(out);
  if (child.pid) opts.onSpawn?.(child.pid);
  if (opts.dbFile && child.pid)
    writeFileDurable(devServerPidFile(opts.dbFile), JSON.stringify({ pid: child.pid, port, ownerPid: process.pid }), { fsync: false });
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? -1));
  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  await waitForPort(ip, port, child, () => exited, deadline, opts.logFile);
  const address = `${ip}:${port}`;
  await waitForNamespace(address, opts.namespace ?? TEMPORAL_DEFAULTS.namespace, deadline);
  return {
    address,
    uiUrl,
    pid: child.pid!,
    stop: async () => {
      if (exited === null) {
        const done = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await done;
        clearTimeout(t);
      }
      if (opts.dbFile) fs.rmSync(devServerPidFile(opts.dbFile), { force: true });
    },
  };
}

/** `temporal server start-dev`'s arguments but the Web UI's; the SQLite file's dir is made here. */
function serverArgs(ip: string, port: number, opts: DevServerOptions): string[] {
  const args = ['server', 'start-dev', '--ip', ip, '--port', String(port), '--log-level', 'warn', ...searchAttributeArgs()];
  args.push('--namespace', opts.namespace ?? TEMPORAL_DEFAULTS.namespace);
  args.push('--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true');
  // One partition per task queue: one host has nothing to spread, and a task written to a partition no poller
  // waits on is forwarded or spooled first (a WFT or an activity start later by ~100-200 ms under load).
  for (const key of ['matching.numTaskqueueReadPartitions', 'matching.numTaskqueueWritePartitions'])
    args.push('--dynamic-config-value', `${key}=1`);
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile, ...sqlitePragmaArgs(opts.dbSync));
  }
  return args;
}

/** The Web UI's arguments, added to `args` (its port refused when in use; else headless); its URL, or null. */
async function webUiArgs(ip: string, port: number, opts: DevServerOptions, args: string[]): Promise<string | null> {
  if (!opts.ui) {
    args.push('--headless');
    return null;
  }
  const uiPort = opts.uiPort ?? port + 1000;
  if (await canConnect(ip, uiPort))
    throw new ConfigError(`Web UI port ${ip}:${uiPort} is already in use; pass another --ui-port (or --port), or stop what listens there`);
  args.push('--ui-port', String(uiPort));
  return `http://${ip}:${uiPort}`;
}

/** The frontend listens before it serves: wait for the port (then the caller waits for a real API call to succeed). */
async function waitForPort(
  ip: string,
  port: number,
  child: ChildProcess,
  exitCode: () => number | null,
  deadline: number,
  logFile: string | undefined,
): Promise<void> {
  while (!(await canConnect(ip, port))) {
    const exited = exitCode();
    if (exited !== null)
      throw new InfrastructureError(
        `temporal server start-dev exited with ${exited}${logFile ? `: ${lastLogLine(logFile)} (log: ${logFile})` : ''}`,
      );
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new InfrastructureError(`temporal server start-dev did not listen on ${ip}:${port} in time`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The last non-empty line of the server's log (why it exited), at most 300 characters. */
function lastLogLine(logFile: string): string {
  try {
    const lines = fs
      .readFileSync(logFile, 'utf8')
      .slice(-8192)
      .split('\n')
      .filter((l) => l.trim());
    return (lines.at(-1) ?? 'no output').slice(0, 300);
  } catch {
    return 'no log';
  }
}

async function waitForNamespace(address: string, namespace: string, deadline: number): Promise<void> {
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const conn = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        await conn.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await conn.close();
      }
    } catch (e) {
      lastError = e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new InfrastructureError(`Temporal dev server at ${address} did not become ready: ${(lastError as Error)?.message}`);
}
