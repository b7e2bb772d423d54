/**
 * Harbor's start-up, paid once per worker: a `harbor run` spends ≈ 4 CPU-seconds importing its CLI and LiteLLM
 * before it does anything, once per task (docs/benchmarks.md). When harbor's launcher is a Python console
 * script (a virtualenv's `bin/harbor`), a fork server (harbor/forkserver.py, run by that Python) imports
 * Harbor once and forks a child per run. The child is what a detached spawn would have been: the leader of its
 * own session and process group, in the run's cwd with its environment and log files; so stopping, timeouts
 * and adoption by a later attempt stay as they are. Only for runs without isolation (the child's
 * /proc/<pid>/environ is the server's, which is the worker's environment plus `harbor.env`, as a spawned
 * harbor's would be); VERO_HARBOR_FORK=0 turns it off. A launcher named bare (the default `harbor`) is the console
 * script that the run's PATH finds. The worker starts the server of its default launcher as it starts
 * (worker/harbor-warm-up.ts), so the first run (the preflight's) pays no import.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { InfrastructureError } from '../model/errors';
import { JOB_ENV } from '../model/harbor/argv';
import { PROJECT_ROOT } from '../infra/package-root';
import { type ForkedExit, type ForkedRun, groupAlive } from '../infra/process-group';
import { removeDeadTemps, tempPrefixOf } from '../infra/dead-temps';
import { hostId } from '../infra/host-groups';

const SERVER_SCRIPT = path.join(PROJECT_ROOT, 'harbor', 'forkserver.py');
/** `<tmp>/vero-harbor-fork-<host>-<worker pid>-XXXXXX/sock`: each server's socket, in a dir of its own (infra/dead-temps.ts). */
const DIR_PREFIX = 'vero-harbor-fork-';

/**
 * The socket dirs of servers whose worker is gone: a server removes its own as it ends, but not when it was
 * killed with its worker's whole process group. Only this host's and user's, only of dead workers.
 */
export const removeStaleServerDirs = (tmp = os.tmpdir()): string[] => removeDeadTemps(tmp, DIR_PREFIX);

/** Per-task variables: set in each child, never in the server (whose imports must not see a candidate's PYTHONPATH). */
const PER_RUN_KEYS = ['PYTHONPATH', JOB_ENV];

/** A server's own record: its pid, the runs it forked, whether it had imported Harbor's CLI before any. */
const ForkServerRecord = z.object({ pid: z.number().int().positive(), forks: z.number().int().min(0), imported: z.boolean() });
export type ForkServerRecord = z.infer<typeof ForkServerRecord>;

const Answer = z.union([
  z.object({ status: ForkServerRecord }),
  z.object({ pid: z.number().int().positive() }),
  z.object({ exit: z.number().int() }),
  z.object({ signal: z.number().int() }),
  z.object({ error: z.string() }),
]);

/** The file a launcher names: itself when absolute; a bare name, the first executable file of that name on `pathVar`. */
export function launcherFile(launcher: string, pathVar: string | undefined): string | null {
  if (path.isAbsolute(launcher)) return launcher;
  if (launcher.includes('/')) return null;
  for (const dir of (pathVar ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d))) {
    const file = path.join(dir, launcher);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return null;
}

/** The Python of a harbor console script (`#!/…/python3` and Harbor's entry point), or null. */
export function consoleScriptPython(launcher: string): string | null {
  if (!path.isAbsolute(launcher)) return null;
  let head: string;
  try {
    const fd = fs.openSync(launcher, 'r');
    try {
      const buf = Buffer.alloc(512);
      head = buf.subarray(0, fs.readSync(fd, buf, 0, 512, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  const python = /^#!(\S*python[\d.]*)\s*\n/.exec(head)?.[1];
  return python && head.includes('from harbor.cli.main import app') && fs.existsSync(python) ? python : null;
}

class ForkServer {
  private constructor(
    private readonly proc: ChildProcess,
    readonly socketPath: string,
  ) {}

  static async start(python: string, env: Record<string, string>): Promise<ForkServer> {
    removeStaleServerDirs();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), tempPrefixOf(DIR_PREFIX)));
    const socketPath = path.join(dir, 'sock');
    // Its cwd is an empty dir, as each run's is (Harbor reads `.env.local` from its cwd).
    const proc = spawn(python, [SERVER_SCRIPT, socketPath], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    const ready = new Promise<void>((resolve, reject) => {
      proc.stdout!.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('ready\n')) resolve();
      });
      proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      proc.on('error', reject);
      proc.on('exit', (code) => reject(new InfrastructureError(`the harbor fork server exited (${code}): ${output.slice(-2000)}`)));
    });
    try {
      await ready;
    } catch (e) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    proc.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    // It ends when this process does (its stdin closes); it must not keep this process alive.
    proc.unref();
    for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as unknown as net.Socket).unref();
    return new ForkServer(proc, socketPath);
  }

  /** Ends the server (its stdin closes); the runs it forked go on. */
  async close(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.stdin!.end();
    await exited;
  }

  get alive(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Asks for one run; resolves once the child exists. */
  run(req: {
    argv: string[];
    argv0: string;
    cwd: string;
    env: Record<string, string>;
    stdout: string;
    stderr: string;
  }): Promise<ForkedRun> {
    return new Promise((resolve, reject) => {
      const sock = net.createConnection(this.socketPath);
      let pid: number | null = null;
      let done = false;
      let resolveEnded: (e: ForkedExit) => void = () => undefined;
      const ended = new Promise<ForkedExit>((r) => (resolveEnded = r));
      const endedWith = (e: ForkedExit) => {
        done = true;
        resolveEnded(e);
      };
      let buf = '';
      sock.on('connect', () => sock.write(`${JSON.stringify(req)}\n`));
      sock.on('data', (d: Buffer) => {
        buf += d.toString();
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const answer = parseAnswer(line);
          if (!answer) {
            sock.destroy(); // not the server's words: treated as a server gone away
            return;
          }
          if ('status' in answer) return sock.destroy(); // not asked for: treated as a server gone away
          if ('pid' in answer) {
            pid = answer.pid;
            resolve({ pid, ended, unref: () => sock.unref() });
          } else if ('exit' in answer) endedWith({ exitCode: answer.exit, signal: null });
          else if ('signal' in answer) endedWith({ exitCode: null, signal: signalName(answer.signal) });
          else reject(new InfrastructureError(`the harbor fork server refused the run: ${answer.error}`));
        }
      });
      sock.on('error', (e) => (pid === null ? reject(e) : undefined));
      sock.on('close', () => {
        if (pid === null) return reject(new InfrastructureError('the harbor fork server closed the connection'));
        if (done) return;
        // The server went away before the child ended: wait for the group itself (its exit code is lost).
        void waitForGroup(pid).then(() => endedWith({ exitCode: null, signal: null }));
      });
    });
  }
}

/** The own record of the server listening at `socketPath`; null when none answers within `timeoutMs`. */
export function forkServerRecordAt(socketPath: string, timeoutMs = 5_000): Promise<ForkServerRecord | null> {
  return new Promise((resolve) => {
    const sock = net.createConnection(socketPath);
    const done = (r: ForkServerRecord | null) => {
      sock.destroy();
      resolve(r);
    };
    let buf = '';
    sock.setTimeout(timeoutMs, () => done(null));
    sock.on('connect', () => sock.write(`${JSON.stringify({ status: true })}\n`));
    sock.on('data', (d: Buffer) => {
      buf += d.toString();
      const answer = buf.includes('\n') ? parseAnswer(buf.slice(0, buf.indexOf('\n'))) : undefined;
      if (answer !== undefined) done(answer && 'status' in answer ? answer.status : null);
    });
    sock.on('error', () => done(null));
    sock.on('close', () => done(null));
  });
}

/** The sockets of the fork servers of the worker `pid` on this host (the bench asks them whether they are warm). */
export function forkServerSocketsOf(pid: number, tmp = os.tmpdir()): string[] {
  const prefix = `${DIR_PREFIX}${hostId()}-${pid}-`;
  return fs
    .readdirSync(tmp)
    .filter((n) => n.startsWith(prefix))
    .map((n) => path.join(tmp, n, 'sock'))
    .filter((sock) => fs.existsSync(sock));
}

function parseAnswer(line: string): z.infer<typeof Answer> | null {
  try {
    return Answer.parse(JSON.parse(line));
  } catch {
    return null;
  }
}

function signalName(n: number): string {
  return Object.entries(os.constants.signals).find(([, v]) => v === n)?.[0] ?? `signal ${n}`;
}

async function waitForGroup(pgid: number): Promise<void> {
  while (groupAlive(pgid)) await new Promise((r) => setTimeout(r, 500));
}

const servers = new Map<string, Promise<ForkServer>>();
/** Servers that could not start (e.g. that Python cannot import Harbor), by key: not tried again for a while. */
const failedAt = new Map<string, number>();
const RETRY_FAILED_AFTER_MS = 10 * 60_000;

/** The server a run of `launcher` with `env` uses (its Python, and `env` without the per-run variables); null: not forked. */
function serverFor(
  launcher: string,
  env: Record<string, string>,
): { python: string; file: string; env: Record<string, string>; key: string } | null {
  if (process.env.VERO_HARBOR_FORK === '0' || process.platform !== 'linux') return null;
  const file = launcherFile(launcher, env.PATH);
  const python = file && consoleScriptPython(file);
  if (!file || !python) return null;
  const serverEnv = Object.fromEntries(
    Object.entries(env)
      .filter(([k]) => !PER_RUN_KEYS.includes(k))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  return { python, file, env: serverEnv, key: JSON.stringify([python, serverEnv]) };
}

function serverOf(spec: NonNullable<ReturnType<typeof serverFor>>): Promise<ForkServer> {
  let server = servers.get(spec.key);
  if (!server) {
    server = ForkServer.start(spec.python, spec.env);
    servers.set(spec.key, server);
  }
  return server;
}

/**
 * Forks `argv` (harbor's console script and its arguments) from this worker's fork server for that Python and
 * environment, starting the server on first use; null when the launcher is not a console script, forking is
 * off, or the server cannot start (the caller then spawns harbor as usual).
 */
export async function forkHarbor(
  argv: string[],
  opts: { cwd: string; env: Record<string, string>; stdout: string; stderr: string },
): Promise<ForkedRun | null> {
  const spec = serverFor(argv[0]!, opts.env);
  if (!spec) return null;
  if (Date.now() - (failedAt.get(spec.key) ?? -Infinity) < RETRY_FAILED_AFTER_MS) return null;
  for (let tries = 0; tries < 2; tries++) {
    try {
      const s = await serverOf(spec);
      if (!s.alive) throw new InfrastructureError('the harbor fork server is gone');
      return await s.run({ argv: argv.slice(1), argv0: spec.file, ...opts });
    } catch (e) {
      servers.delete(spec.key); // start a fresh one once; then spawn as usual
      if (tries === 1) {
        failedAt.set(spec.key, Date.now());
        process.stderr.write(`${new Date().toISOString()} [WARN] harbor runs are spawned, not forked: ${String(e).slice(0, 500)}\n`);
      }
    }
  }
  return null;
}

/**
 * Starts the fork server that a run of `launcher` with `env` would start, ahead of that run: true once it has
 * imported Harbor; false when such a run is not forked or the server could not start (the first run then tries,
 * as without this). Never throws.
 */
export async function warmForkServer(launcher: string, env: Record<string, string>): Promise<boolean> {
  const spec = serverFor(launcher, env);
  if (!spec) return false;
  const server = serverOf(spec);
  try {
    return (await server).alive;
  } catch (e) {
    if (servers.get(spec.key) === server) servers.delete(spec.key);
    process.stderr.write(
      `${new Date().toISOString()} [WARN] the harbor fork server did not start ahead of the first run: ${String(e).slice(0, 500)}\n`,
    );
    return false;
  }
}

/** The own records of this process's fork servers that have started. */
export async function forkServerRecords(): Promise<ForkServerRecord[]> {
  const started = await Promise.all([...servers.values()].map((s) => s.catch(() => null)));
  const records = await Promise.all(started.map((s) => (s?.alive ? forkServerRecordAt(s.socketPath) : null)));
  return records.filter((r): r is ForkServerRecord => r !== null);
}

/** Ends this process's fork servers (as its exit would); the runs they forked go on, each in its own group. */
export async function closeForkServers(): Promise<void> {
  const all = [...servers.values()];
  servers.clear();
  await Promise.all(all.map((s) => s.then((server) => server.close()).catch(() => undefined)));
}
