/**
 * Runs a command in its own process group. Cancellation and deadlines signal the whole group (SIGTERM, then
 * SIGKILL after a grace period), so nested processes (harbor → docker → agents) never outlive the caller.
 * The single subprocess wrapper for everything vero supervises (harbor, preflight, Mode A's programs).
 *
 * Its named exceptions, each a different kind of child: git (infra/git.ts, short and foreground), docker
 * (infra/docker.ts: short queries, and one `docker events` stream that ends with its stdin), the dev server
 * (infra/dev-server.ts: a detached server with a pid file of its own, stopped by its owner or the next start),
 * what a command runs in the foreground on the user's terminal (infra/foreground.ts: the provisioning scripts and
 * `vero run`'s harbor; harbor/compiled-task-run.ts: harbor on a compiled task). A lint rule keeps it so
 * (eslint.config.mjs).
 */
import * as fs from 'node:fs';
import { execa } from 'execa';
import { InfrastructureError } from '../model/errors';

export interface GroupRunOptions {
  cwd: string;
  env?: Record<string, string>;
  /** stdout and stderr are appended here (stdout goes to `stdoutFile` instead, when given). */
  logFile: string;
  /** Standard input from this file (default: none). */
  stdinFile?: string;
  /** Standard output to this file (truncated), e.g. a program's answers, apart from its log. */
  stdoutFile?: string;
  signal?: AbortSignal;
  /** Absolute deadline (ms since epoch); the group is stopped when it passes. */
  deadline?: number;
  graceMs?: number;
  /**
   * How a stop begins: this signal to the leader alone (`leader`, so it can tear down its own children, as
   * Harbor does on SIGINT/SIGTERM) or to the whole group (`group`, the default). SIGKILL of the whole group
   * follows after `graceMs` either way.
   */
  stopSignal?: NodeJS.Signals;
  stopTarget?: 'leader' | 'group';
  /**
   * Asked when `signal` aborts: true leaves the group running and returns at once (`detached`), for a later
   * owner to adopt; false (the default) stops it.
   */
  detachOnAbort?: () => boolean;
  /** Called once the process has started (e.g. to record its pid for takeover); `forked` by the harbor fork server. */
  onStart?: (pid: number, forked: boolean) => void;
  /**
   * Starts the process by forking it from a server that has its program loaded (the caller's: the harbor fork
   * server, harbor/forkserver.ts) instead of spawning it, when it can (no uid, no clean environment, no stdin);
   * when it answers null, the process is spawned.
   */
  fork?: Forker;
  /** Replace the environment instead of extending this process's. */
  cleanEnv?: boolean;
  uid?: number;
  gid?: number;
}

export interface ForkedExit {
  exitCode: number | null;
  signal: string | null;
}

/** A process forked by a fork server: its pid (= its process group) and its end. */
export interface ForkedRun {
  pid: number;
  ended: Promise<ForkedExit>;
  /** Lets this process exit while the run goes on (it is left for a later attempt to adopt). */
  unref(): void;
}

/**
 * Forks `argv` in `cwd` with `env` and its output in the given files; null when it cannot (then it is spawned),
 * also when `signal` (the run's cancel or deadline) aborts before it could.
 */
type Forker = (
  argv: string[],
  io: { cwd: string; env: Record<string, string>; stdout: string; stderr: string; signal?: AbortSignal },
) => Promise<ForkedRun | null>;

export interface GroupRunResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The executable was not found. */
  notFound: boolean;
  durationMs: number;
  pid: number | null;
  /** The grace ran out and the group was SIGKILLed: what it would have cleaned up may be left behind. */
  forced: boolean;
  /** Left running on abort (see `detachOnAbort`). */
  detached?: boolean;
}

/** The result for a group whose exit this process does not see (left running, or watched from outside). */
function withoutExit(r: { timedOut: boolean; cancelled: boolean; started: number; pid: number | null; forced: boolean }): GroupRunResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: r.timedOut,
    cancelled: r.cancelled,
    notFound: false,
    durationMs: Date.now() - r.started,
    pid: r.pid,
    forced: r.forced,
  };
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export { processAlive } from './process-alive';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface StopOptions {
  graceMs?: number;
  signal?: NodeJS.Signals;
  /** `leader`: signal only the group leader first, and wait for the whole group to leave. */
  target?: 'leader' | 'group';
}

/**
 * Signals the group (or its leader), SIGKILLs the group after the grace, and waits until no process of the
 * group is left. Returns true when the SIGKILL was needed.
 */
export async function stopGroup(pgid: number, opts: StopOptions = {}): Promise<boolean> {
  const { graceMs = 10_000, signal = 'SIGTERM', target = 'group' } = opts;
  const send = (sig: NodeJS.Signals, who: number) => {
    try {
      process.kill(who, sig);
    } catch {
      /* already gone */
    }
  };
  if (!groupAlive(pgid)) return false;
  send(signal, target === 'leader' ? pgid : -pgid);
  const until = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < until) await sleep(50);
  const forced = groupAlive(pgid);
  if (forced) send('SIGKILL', -pgid);
  for (let i = 0; i < 100 && groupAlive(pgid); i++) await sleep(20);
  return forced;
}

/**
 * A child's log file, opened without following a symlink: a log may sit in a dir the child's user owns (a command
 * harness's), where a process of that user could swap it for a link to a file only this process may write.
 */
function openLog(file: string, how: 'append' | 'truncate'): number {
  const { O_WRONLY, O_CREAT, O_APPEND, O_TRUNC, O_NOFOLLOW } = fs.constants;
  return fs.openSync(file, O_WRONLY | O_CREAT | O_NOFOLLOW | (how === 'append' ? O_APPEND : O_TRUNC), 0o644);
}

/** execa hands an integer file descriptor straight to spawn (its types only list 1–9). */
const fileDescriptor = (fd: number) => fd as unknown as 'inherit';

/**
 * The child, leading a process group of its own, with file descriptors of its own, not pipes through this
 * process (what execa's `{ file }` does): a group that outlives its worker (to be adopted) must not die of
 * SIGPIPE at its next write. (stdin is only given to runs that are never adopted.)
 */
function spawnInOwnGroup(argv: string[], opts: GroupRunOptions) {
  const fds = {
    stdout: openLog(opts.stdoutFile ?? opts.logFile, opts.stdoutFile ? 'truncate' : 'append'),
    stderr: openLog(opts.logFile, 'append'),
  } as const;
  try {
    return execa(argv[0]!, argv.slice(1), {
      cwd: opts.cwd,
      env: opts.env,
      extendEnv: !opts.cleanEnv,
      ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid } : {}),
      detached: true,
      stdin: opts.stdinFile ? { file: opts.stdinFile } : 'ignore',
      stdout: fileDescriptor(fds.stdout),
      stderr: fileDescriptor(fds.stderr),
      reject: false,
    });
  } finally {
    for (const fd of Object.values(fds)) fs.closeSync(fd);
  }
}

/** What runInGroup waits on: a spawned child (execa's) or a forked harbor, alike. */
type StartedChild = PromiseLike<{ exitCode?: number; signal?: string; failed?: boolean; message?: string; code?: string }> & {
  pid?: number;
  unref(): void;
};

/**
 * A process forked by `opts.fork`, as runInGroup sees a spawned child (boxed: an async function cannot return a
 * thenable unawaited); null when it cannot be forked.
 */
async function forkedChild(argv: string[], opts: GroupRunOptions): Promise<{ child: StartedChild } | null> {
  if (!opts.fork || opts.uid !== undefined || opts.cleanEnv || opts.stdinFile) return null;
  const env = Object.fromEntries(Object.entries({ ...process.env, ...opts.env }).filter((e): e is [string, string] => e[1] !== undefined));
  // A cancel or the deadline while the fork server still starts: spawned, and then stopped as usual.
  const stops = [opts.signal, opts.deadline === undefined ? undefined : AbortSignal.timeout(Math.max(0, opts.deadline - Date.now()))];
  const signal = AbortSignal.any(stops.filter((s): s is AbortSignal => s !== undefined));
  const run = await opts.fork(argv, { cwd: opts.cwd, env, stdout: opts.stdoutFile ?? opts.logFile, stderr: opts.logFile, signal });
  if (!run) return null;
  const ended = run.ended.then((e) => ({ exitCode: e.exitCode ?? undefined, signal: e.signal ?? undefined, failed: false }));
  return { child: Object.assign(ended, { pid: run.pid, unref: run.unref }) };
}

export async function runInGroup(argv: string[], opts: GroupRunOptions): Promise<GroupRunResult> {
  // A missing working directory makes spawn fail with ENOENT, which would read as a missing executable.
  if (!fs.statSync(opts.cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new InfrastructureError(`the working directory ${opts.cwd} does not exist`);
  const started = Date.now();
  let timedOut = false;
  let cancelled = false;
  const forked = await forkedChild(argv, opts);
  // execa's subprocess is a promise of its result with a pid: the same shape.
  const child: StartedChild = forked?.child ?? (spawnInOwnGroup(argv, opts) as unknown as StartedChild);
  const pid = child.pid ?? null;
  if (pid !== null) opts.onStart?.(pid, forked !== null);
  const stopping: Promise<boolean>[] = [];
  const stopOpts: StopOptions = { graceMs: opts.graceMs, signal: opts.stopSignal, target: opts.stopTarget };
  const stop = () => {
    if (pid !== null) stopping.push(stopGroup(pid, stopOpts));
  };
  let detach: () => void = () => undefined;
  const detached = new Promise<'detached'>((resolve) => (detach = () => resolve('detached')));
  const onAbort = () => {
    cancelled = true;
    if (opts.detachOnAbort?.()) detach();
    else stop();
  };
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  const onDeadline = () => {
    timedOut = true;
    stop();
  };
  const timer = opts.deadline === undefined ? undefined : setTimeout(onDeadline, Math.max(0, opts.deadline - Date.now()));
  const result = await Promise.race([child, detached]);
  clearTimeout(timer);
  opts.signal?.removeEventListener('abort', onAbort);
  if (result === 'detached') {
    child.unref();
    return { ...withoutExit({ timedOut, cancelled, started, pid, forced: false }), detached: true };
  }
  // The leader may exit before its children: make sure the whole group is gone once it was stopped.
  if (pid !== null && (cancelled || timedOut)) stopping.push(stopGroup(pid, { ...stopOpts, graceMs: 0, signal: 'SIGKILL' }));
  const forced = (await Promise.all(stopping)).some(Boolean);
  const code = result.code;
  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    timedOut,
    cancelled,
    notFound: code === 'ENOENT' || (result.failed === true && /ENOENT/.test(String(result.message)) && result.exitCode === undefined),
    durationMs: Date.now() - started,
    pid,
    forced,
  };
}

/**
 * Watches a process group that is not our child (adopted from a dead worker) until it is gone, stopping it on
 * cancellation or at the deadline as `runInGroup` would. Its exit code cannot be known: null.
 */
export async function watchGroup(
  pgid: number,
  opts: { signal?: AbortSignal; deadline?: number; graceMs?: number; onTick?: () => void; detachOnAbort?: () => boolean },
): Promise<GroupRunResult> {
  const started = Date.now();
  let cancelled = false;
  let timedOut = false;
  let forced = false;
  const stop = () => stopGroup(pgid, { graceMs: opts.graceMs, signal: 'SIGTERM', target: 'leader' });
  let detached = false;
  while (groupAlive(pgid)) {
    if (opts.signal?.aborted) {
      cancelled = true;
      if (opts.detachOnAbort?.()) detached = true;
      else forced = await stop();
      break;
    }
    if (opts.deadline !== undefined && Date.now() >= opts.deadline) {
      timedOut = true;
      forced = await stop();
      break;
    }
    opts.onTick?.();
    await sleep(500);
  }
  const result = withoutExit({ timedOut, cancelled, started, pid: pgid, forced });
  return detached ? { ...result, detached } : result;
}
