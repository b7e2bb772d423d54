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
import { JobLock, TrialResult } from '../core/harbor-result';
import { groupAlive, runInGroup, stopGroup, tail } from '../core/process-group';
import { resolvedRegistryFile } from '../core/task-source';
import { rewardsOf } from '../core/trial-ranking';
import { removeTrialLeftovers } from './docker-leftovers';
import { faultPause } from './fault-pause';
import {
  classifyStartFailure,
  DEFAULT_STOP_GRACE_SEC,
  dockerAnswers,
  fileSize,
  harborCwd,
  harborEnv,
  JOB_ENV,
  readSince,
  usesLocalDocker,
} from './harbor-process';

export interface RunTaskInput {
  runDir: string;
  task: string;
  worktree: string;
  settings: EvalSettings;
}

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
export async function stopOrphan(jobDir: string, pidFile: string, graceMs: number): Promise<boolean> {
  let prev: PidFile;
  try {
    prev = JSON.parse(fs.readFileSync(pidFile, 'utf8')) as PidFile;
  } catch {
    return false;
  }
  if (prev.host !== os.hostname() || !groupAlive(prev.pid) || !processHasEnv(prev.pid, JOB_ENV, jobDir)) return false;
  await stopGroup(prev.pid, { graceMs, signal: 'SIGTERM', target: 'leader' });
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
export function isolationFor(s: EvalSettings, base: Record<string, string>, dirs: string[]): Isolation {
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

function trialDirNames(jobDir: string): string[] {
  try {
    return fs
      .readdirSync(jobDir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

function harborVersionOf(jobDir: string): string | null {
  try {
    const lock = JobLock.safeParse(JSON.parse(fs.readFileSync(path.join(jobDir, 'lock.json'), 'utf8')));
    return lock.success ? (lock.data.harbor?.version ?? null) : null;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function runTask(input: RunTaskInput): Promise<TaskResult> {
  const ctx = Context.current();
  const attempt = ctx.info.attempt;
  const s = input.settings;
  const jobsDir = path.join(input.runDir, 'jobs');
  const jobName = jobNameFor(input.task);
  const jobDir = path.join(jobsDir, jobName);
  const logFile = path.join(jobsDir, `${jobName}.harbor.log`);
  const pidFile = path.join(jobsDir, `${jobName}.pid`);
  const graceMs = (s.stopGraceSec ?? DEFAULT_STOP_GRACE_SEC) * 1000;
  fs.mkdirSync(jobsDir, { recursive: true });
  const cwd = harborCwd(input.runDir);
  const env = harborEnv(s, input.worktree, jobDir);
  const cleanUp = async (why: string) => {
    if (!usesLocalDocker(s)) return;
    const removed = await removeTrialLeftovers(trialDirNames(jobDir), { ...(process.env as Record<string, string>), ...env });
    const n = Object.values(removed).reduce((a, l) => a + l.length, 0);
    if (n) ctx.log.warn(`removed Docker leftovers of stopped trials (${why})`, { task: input.task, ...removed });
  };

  if (await stopOrphan(jobDir, pidFile, graceMs)) {
    ctx.log.warn('stopped an orphaned harbor process of a previous attempt', { task: input.task });
    await cleanUp('orphan');
  }
  const pruned = pruneForResume(jobDir);
  if (pruned.length) ctx.log.info('re-running trials without rewards', { task: input.task, trials: pruned });

  const source = s.source.registry_path
    ? { ...s.source, registry_path: resolvedRegistryFile(s.source.registry_path, input.runDir) }
    : s.source;
  const argv = harborArgv({ harbor: s.harbor, source, task: input.task, jobsDir, jobName, worktree: input.worktree });
  const beat = () => ctx.heartbeat({ attempt, trialsWithResults: countTrialResults(jobDir) });
  beat();
  const heartbeatEvery = Math.max(200, Math.min(5_000, (s.heartbeatTimeoutSec * 1000) / 4));
  const deadline = Date.now() + s.taskTimeoutSec * 1000;
  const notes: string[] = [];
  const logTail = () => tail(logFile, 1500).trim();
  let run;
  for (let launch = 1; ; launch++) {
    const iso = isolationFor(s, env, [jobsDir, input.worktree, cwd]);
    const offset = fileSize(logFile);
    fs.appendFileSync(logFile, `\n# vero-harbor attempt ${attempt}.${launch} at ${new Date().toISOString()}: ${JSON.stringify(argv)}\n`);
    const timer = setInterval(beat, heartbeatEvery);
    try {
      run = await runInGroup(argv, {
        cwd,
        env: iso.env,
        cleanEnv: iso.cleanEnv,
        uid: iso.uid,
        gid: iso.gid,
        logFile,
        signal: ctx.cancellationSignal,
        deadline,
        graceMs,
        stopSignal: 'SIGTERM',
        stopTarget: 'leader',
        onStart: (pid) => fs.writeFileSync(pidFile, JSON.stringify({ pid, host: os.hostname() } satisfies PidFile)),
      });
    } finally {
      clearInterval(timer);
    }
    fs.rmSync(pidFile, { force: true });
    if (run.cancelled || run.timedOut) await cleanUp(run.cancelled ? 'cancelled' : 'task timeout');
    if (run.cancelled) throw ctx.cancellationSignal.reason ?? new Error('cancelled');
    if (run.notFound) {
      throw ApplicationFailure.nonRetryable(
        `harbor launcher not found: "${argv[0]}" (harbor.command); is Harbor installed and on PATH?`,
        FailureType.HarborNotFound,
      );
    }
    if (run.timedOut) break;
    if (run.exitCode === 2) {
      throw ApplicationFailure.nonRetryable(`harbor rejected its command line (exit 2): ${logTail()}`, FailureType.HarborUsageError);
    }
    const started = fs.existsSync(path.join(jobDir, 'config.json'));
    if (
      run.exitCode === 0 ||
      (started && !/lock\.json that does not match|resumed with a different config/.test(readSince(logFile, offset)))
    )
      break;
    const failure = classifyStartFailure(readSince(logFile, offset));
    if (failure.kind === 'stale-job') {
      // Harbor will not resume this job (its task files or config changed since the last attempt): start a
      // fresh one, and keep the old dir for inspection.
      const aside = path.join(input.runDir, 'stale-jobs', `${jobName}-${attempt}-${launch}`);
      fs.mkdirSync(path.dirname(aside), { recursive: true });
      fs.renameSync(jobDir, aside);
      notes.push(`harbor refused to resume the job (${failure.reason}); started a fresh job, the old one is at ${aside}`);
      ctx.log.warn('harbor refused to resume; starting a fresh job dir', { task: input.task, reason: failure.reason, aside });
      continue;
    }
    if (failure.kind === 'infrastructure') {
      notes.push(`harbor could not start (${failure.reason}); waited for Docker and ran it again`);
      ctx.log.warn('harbor could not reach Docker; waiting for it', { task: input.task, reason: failure.reason });
      for (let wait = 2_000; !(usesLocalDocker(s) && (await dockerAnswers(env))); wait = Math.min(wait * 2, 60_000)) {
        if (Date.now() + wait > deadline) {
          throw ApplicationFailure.retryable(
            `task "${input.task}": ${failure.reason} (still unavailable at the task timeout)`,
            FailureType.HarborUnavailable,
          );
        }
        beat();
        await sleep(wait);
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new Error('cancelled');
      }
      continue;
    }
    throw ApplicationFailure.nonRetryable(
      `harbor did not start the job for task "${input.task}" (exit ${run.exitCode ?? run.signal}): ${failure.reason || logTail()}`,
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
    usage: row.usage,
    harborVersion: harborVersionOf(jobDir),
    notes,
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
