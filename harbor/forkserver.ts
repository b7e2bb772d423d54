/**
 * Harbor's start-up, paid once per worker: a `harbor run` spends ≈ 4 CPU-seconds importing its CLI and LiteLLM
 * before it does anything, once per task (docs/benchmarks.md). When harbor's launcher is a Python console
 * script (a virtualenv's `bin/harbor`), a fork server (harbor/forkserver.py, run by that Python) imports
 * Harbor once and forks a child per run. The child is what a detached spawn would have been: the leader of its
 * own session and process group, in the run's cwd with its environment and log files; so stopping, timeouts
 * and adoption by a later attempt stay as they are. Only for runs without isolation (the child's
 * /proc/<pid>/environ is the server's, which is the worker's environment plus `harbor.env`, as a spawned
 * harbor's would be); VERO_HARBOR_FORK=0 turns it off. A launcher named bare (the default `harbor`) is the console
 * script that the run's PATH finds. A run is spawned instead when its PYTHONPATH provides a module the server
 * imported (the child would keep the server's copy), and when the server is not ready in time or the run is
 * cancelled first. The worker starts the server of its default launcher as it starts (worker/harbor-warm-up.ts),
 * so the first run (the preflight's) pays no import; the eval sidecar's worker does not (its runs have isolation).
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
  z.object({ spawn: z.string() }),
]);

/** The longest a fork server may take to import Harbor and say it is ready; after it, runs are spawned. */
const START_TIMEOUT_MS = 120_000;

/** A server that did not say it was ready in time: not started again for a while (RETRY_FAILED_AFTER_MS). */
class StartTimedOut extends InfrastructureError {}

/** Servers still importing Harbor: ended by closeForkServers (a ready one ends when its stdin closes). */
const starting = new Set<ChildProcess>();

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

/**
 * A console script as pip and uv write Harbor's entry point, whole: the shebang to a Python, then
 * `from harbor.cli.main import app` and `sys.exit(app())` in the installers' own shape (with pip's or uv's fix of
 * `sys.argv[0]`; test/fixtures/console-scripts holds each, as they wrote it). A wrapper that differs in any line (one
 * that sets something up before Harbor) is not one: it is spawned as written.
 */
const CONSOLE_SCRIPT = new RegExp(
  [
    String.raw`^#!(\S*python[\d.]*)[ \t]*\n`,
    String.raw`(?:# -\*- coding: utf-8 -\*-\n)?`,
    String.raw`(?:import re\n)?import sys\nfrom harbor\.cli\.main import app\n`,
    String.raw`if __name__ == (['"])__main__\2:\n`,
    String.raw`(?: {4}sys\.argv\[0\] = re\.sub\(r(['"])[^'"\n]*\3, (['"])\4, sys\.argv\[0\]\)\n`,
    String.raw`| {4}if sys\.argv\[0\]\.endswith\("-script\.pyw"\):\n {8}sys\.argv\[0\] = sys\.argv\[0\]\[:-11\]\n`,
    String.raw` {4}elif sys\.argv\[0\]\.endswith\("\.exe"\):\n {8}sys\.argv\[0\] = sys\.argv\[0\]\[:-4\]\n)?`,
    String.raw` {4}sys\.exit\(app\(\)\)\n?$`,
  ].join(''),
);

/** The Python of a harbor console script (pip's or uv's, CONSOLE_SCRIPT), or null. */
export function consoleScriptPython(launcher: string): string | null {
  if (!path.isAbsolute(launcher)) return null;
  let text: string;
  try {
    const fd = fs.openSync(launcher, 'r');
    try {
      const buf = Buffer.alloc(4096);
      text = buf.subarray(0, fs.readSync(fd, buf, 0, 4096, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  const python = CONSOLE_SCRIPT.exec(text)?.[1];
  return python && fs.existsSync(python) ? python : null;
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
    starting.add(proc);
    let timer: NodeJS.Timeout | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      timer = setTimeout(() => {
        reject(new StartTimedOut(`the harbor fork server was not ready after ${START_TIMEOUT_MS / 1000} s: ${output.slice(-2000)}`));
        proc.kill('SIGKILL');
      }, START_TIMEOUT_MS);
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
    } finally {
      clearTimeout(timer);
      starting.delete(proc);
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

  /** Asks for one run; resolves once the child exists, or null when the server answers that it must be spawned. */
  run(req: {
    argv: string[];
    argv0: string;
    cwd: string;
    env: Record<string, string>;
    stdout: string;
    stderr: string;
  }): Promise<ForkedRun | null> {
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
          if ('spawn' in answer) {
            noteSpawned(answer.spawn);
            resolve(null);
            return sock.destroy();
          }
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

/** Each reason a server gave for a spawn, noted once per process (a candidate's every run would repeat it). */
const notedSpawns = new Set<string>();
function noteSpawned(reason: string): void {
  if (notedSpawns.has(reason)) return;
  notedSpawns.add(reason);
  process.stderr.write(`${new Date().toISOString()} [INFO] harbor runs spawned, not forked: ${reason.slice(0, 500)}\n`);
}

/** `promise`'s value, or null as soon as `signal` aborts (the promise goes on, for whoever else awaits it). */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | null> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(null);
  let onAbort = () => undefined as void;
  const aborted = new Promise<null>((resolve) => {
    onAbort = () => resolve(null);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
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
 * off, the server cannot start or is not ready within START_TIMEOUT_MS, `signal` aborts before it is, or the
 * server answers that this run must be spawned (its PYTHONPATH provides a module the server imported): the caller
 * then spawns harbor as usual.
 */
export async function forkHarbor(
  argv: string[],
  opts: { cwd: string; env: Record<string, string>; stdout: string; stderr: string; signal?: AbortSignal },
): Promise<ForkedRun | null> {
  const spec = serverFor(argv[0]!, opts.env);
  if (!spec) return null;
  if (Date.now() - (failedAt.get(spec.key) ?? -Infinity) < RETRY_FAILED_AFTER_MS) return null;
  const { signal, ...io } = opts;
  for (let tries = 0; tries < 2; tries++) {
    const server = serverOf(spec);
    try {
      const s = await unlessAborted(server, signal);
      if (!s) return null; // cancelled while the server starts: spawned, and stopped as any cancelled run
      if (!s.alive) throw new InfrastructureError('the harbor fork server is gone');
      return await s.run({ argv: argv.slice(1), argv0: spec.file, ...io });
    } catch (e) {
      if (servers.get(spec.key) === server) servers.delete(spec.key); // start a fresh one once; then spawn as usual
      if (tries === 1 || e instanceof StartTimedOut) {
        failedAt.set(spec.key, Date.now());
        process.stderr.write(`${new Date().toISOString()} [WARN] harbor runs are spawned, not forked: ${String(e).slice(0, 500)}\n`);
        return null;
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
    if (e instanceof StartTimedOut) failedAt.set(spec.key, Date.now()); // the first run does not wait as long again
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
  for (const proc of starting) proc.kill('SIGKILL'); // still importing: nothing forked yet
  await Promise.all(all.map((s) => s.then((server) => server.close()).catch(() => undefined)));
}
