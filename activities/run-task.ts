/**
 * One task = one nested `harbor run`. The job dir is fixed for (evaluation run, task), so a retried activity
 * (after a crash, a timeout or an infrastructure error) resumes Harbor's job: scored trials are kept and
 * only missing or infra-failed ones run again.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { collate, loadTrials, TaskNameMismatchError } from '../core/collate';
import type { EvalSettings, TaskResult } from '../core/eval-types';
import { FailureType } from '../core/failures';
import { harborArgv, jobNameFor } from '../core/harbor-argv';
import { TrialResult } from '../core/harbor-result';
import { groupAlive, runInGroup, stopGroup, tail } from '../core/process-group';
import { faultPause } from './fault-pause';
import { rewardsOf } from '../core/trial-ranking';

export interface RunTaskInput {
  runDir: string;
  task: string;
  worktree: string;
  settings: EvalSettings;
}

/** Marks the harbor process of a job dir so a later attempt can find and stop an orphan. */
const JOB_ENV = 'VERO_HARBOR_JOB_DIR';

interface PidFile {
  pid: number;
  host: string;
}

function processHasEnv(pid: number, key: string, value: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${key}=${value}`);
  } catch {
    return false;
  }
}

/**
 * A previous attempt's harbor may still run (its worker was SIGKILLed; detached groups survive). Stop it
 * before resuming, so two harbor processes never share a job dir.
 */
export async function stopOrphan(jobDir: string, pidFile: string): Promise<boolean> {
  let prev: PidFile;
  try {
    prev = JSON.parse(fs.readFileSync(pidFile, 'utf8')) as PidFile;
  } catch {
    return false;
  }
  if (prev.host !== os.hostname() || !groupAlive(prev.pid) || !processHasEnv(prev.pid, JOB_ENV, jobDir)) return false;
  await stopGroup(prev.pid, 5_000);
  return true;
}

/**
 * Before Harbor resumes the job: delete trials that are unreadable or failed without rewards (infrastructure
 * errors), so they run again; keep every trial that has rewards. Trials without result.json are Harbor's to
 * delete.
 */
export function pruneForResume(jobDir: string): string[] {
  const removed: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(jobDir, { withFileTypes: true });
  } catch {
    return removed;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const file = path.join(jobDir, e.name, 'result.json');
    if (!fs.existsSync(file)) continue;
    let keep = false;
    try {
      const parsed = TrialResult.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
      keep = parsed.success && rewardsOf(parsed.data) !== null;
    } catch {
      keep = false;
    }
    if (!keep) {
      fs.rmSync(path.join(jobDir, e.name), { recursive: true, force: true });
      removed.push(e.name);
    }
  }
  return removed;
}

function countTrialResults(jobDir: string): number {
  try {
    return fs.readdirSync(jobDir).filter((d) => fs.existsSync(path.join(jobDir, d, 'result.json'))).length;
  } catch {
    return 0;
  }
}

/** uid/gid of a local user, from /etc/passwd; null when there is no such user. */
export function lookupUser(name: string): { uid: number; gid: number; home: string } | null {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name) return { uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '/' };
    }
  } catch {
    /* no passwd file */
  }
  return null;
}

function chownTree(dir: string, uid: number, gid: number): void {
  fs.chownSync(dir, uid, gid);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chownTree(p, uid, gid);
    else fs.lchownSync(p, uid, gid);
  }
}

interface Isolation {
  env: Record<string, string>;
  cleanEnv: boolean;
  uid?: number;
  gid?: number;
}

/** The environment and user of the harbor process. Untrusted candidate code sees nothing it was not given. */
function isolationFor(s: EvalSettings, jobDir: string, dirs: string[]): Isolation {
  const base = { ...s.harbor.env, [JOB_ENV]: jobDir };
  if (!s.isolation) return { env: base, cleanEnv: false };
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: process.env.LANG ?? 'C.UTF-8' };
  for (const name of s.isolation.passEnv) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  const user = s.isolation.runAs ? lookupUser(s.isolation.runAs) : null;
  if (user && process.getuid?.() === 0) {
    for (const d of dirs) chownTree(d, user.uid, user.gid);
    return { env: { ...env, HOME: user.home, ...base }, cleanEnv: true, uid: user.uid, gid: user.gid };
  }
  return { env: { ...env, HOME: process.env.HOME ?? '/', ...base }, cleanEnv: true };
}

export async function runTask(input: RunTaskInput): Promise<TaskResult> {
  const ctx = Context.current();
  const attempt = ctx.info.attempt;
  const s = input.settings;
  const jobsDir = path.join(input.runDir, 'jobs');
  const jobName = jobNameFor(input.task);
  const jobDir = path.join(jobsDir, jobName);
  const logFile = path.join(jobsDir, `${jobName}.harbor.log`);
  const pidFile = path.join(jobsDir, `${jobName}.pid`);
  fs.mkdirSync(jobsDir, { recursive: true });

  if (await stopOrphan(jobDir, pidFile)) ctx.log.warn('stopped an orphaned harbor process of a previous attempt', { task: input.task });
  const pruned = pruneForResume(jobDir);
  if (pruned.length) ctx.log.info('re-running trials without rewards', { task: input.task, trials: pruned });

  const argv = harborArgv({ harbor: s.harbor, source: s.source, task: input.task, jobsDir, jobName, worktree: input.worktree });
  fs.appendFileSync(logFile, `\n# vero-harbor attempt ${attempt} at ${new Date().toISOString()}: ${JSON.stringify(argv)}\n`);
  const beat = () => ctx.heartbeat({ attempt, trialsWithResults: countTrialResults(jobDir) });
  beat();
  const heartbeatEvery = Math.max(200, Math.min(5_000, (s.heartbeatTimeoutSec * 1000) / 4));
  const timer = setInterval(beat, heartbeatEvery);
  const iso = isolationFor(s, jobDir, [jobsDir, input.worktree]);
  let run;
  try {
    run = await runInGroup(argv, {
      cwd: input.worktree,
      env: iso.env,
      cleanEnv: iso.cleanEnv,
      uid: iso.uid,
      gid: iso.gid,
      logFile,
      signal: ctx.cancellationSignal,
      deadline: Date.now() + s.taskTimeoutSec * 1000,
      onStart: (pid) => fs.writeFileSync(pidFile, JSON.stringify({ pid, host: os.hostname() } satisfies PidFile)),
    });
  } finally {
    clearInterval(timer);
  }
  fs.rmSync(pidFile, { force: true });
  if (run.cancelled) throw ctx.cancellationSignal.reason ?? new Error('cancelled');

  const logTail = () => tail(logFile, 1500).trim();
  if (run.notFound) {
    throw ApplicationFailure.nonRetryable(
      `harbor launcher not found: "${argv[0]}" (harbor.command); is Harbor installed and on PATH?`,
      FailureType.HarborNotFound,
    );
  }
  if (!run.timedOut && run.exitCode === 2) {
    throw ApplicationFailure.nonRetryable(`harbor rejected its command line (exit 2): ${logTail()}`, FailureType.HarborUsageError);
  }
  if (!run.timedOut && !fs.existsSync(path.join(jobDir, 'config.json'))) {
    throw ApplicationFailure.nonRetryable(
      `harbor did not start the job for task "${input.task}" (exit ${run.exitCode ?? run.signal}): ${logTail()}`,
      FailureType.HarborConfigError,
    );
  }

  await faultPause('collate');
  const loaded = loadTrials(jobDir);
  let row;
  try {
    row = collate(loaded.trials, { requested: [input.task], rewardKey: s.rewardKey, aggregate: s.aggregate })[0]!;
  } catch (e) {
    if (e instanceof TaskNameMismatchError) throw ApplicationFailure.nonRetryable(e.message, FailureType.TaskNameMismatch);
    throw e;
  }
  const how = [
    `harbor exit ${run.exitCode ?? run.signal}`,
    ...(run.timedOut ? [`stopped at the task timeout (${s.taskTimeoutSec}s)`] : []),
    ...(loaded.invalid.length ? [`${loaded.invalid.length} unreadable result.json`] : []),
  ].join(', ');
  const result: TaskResult = {
    task: input.task,
    status: row.status,
    score: row.score,
    metrics: row.metrics,
    trial: row.trial,
    taskName: row.taskName,
    nTrials: row.nTrials,
    runs: attempt,
    exceptions: row.exceptions,
    timedOut: run.timedOut,
    jobDir,
    error: row.status === 'error' ? `${row.error}; ${how}` : null,
  };
  if (row.status === 'scored') return result;
  if (attempt < s.taskAttempts) {
    throw ApplicationFailure.retryable(
      `task "${input.task}": ${result.error} (attempt ${attempt} of ${s.taskAttempts})`,
      FailureType.HarborTaskError,
    );
  }
  return result;
}
