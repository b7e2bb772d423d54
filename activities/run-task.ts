/**
 * One task = one nested `harbor run`. The job dir is fixed for (evaluation run, task), so a retried activity
 * (after a crash, a timeout or an infrastructure error) resumes Harbor's job: scored trials are kept and
 * only missing or infra-failed ones run again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { collate, loadTrials, readTrialFile, TaskNameMismatchError } from '../infra/collate';
import type { EvalSettings, TaskResult } from '../model/eval-types';
import { FailureType } from '../model/failures';
import { harborArgv, jobNameFor } from '../model/harbor-argv';
import { JobLock } from '../model/harbor-result';
import { GroupRunResult, groupAlive, runInGroup, stopGroup, tail, watchGroup } from '../infra/process-group';
import { resolvedRegistryFile } from '../infra/task-source';
import { rewardsOf } from '../model/trial-ranking';
import { removeJobLeftovers } from './docker-leftovers';
import { faultPause } from './fault-pause';
import { materializeCandidate } from './prepare-candidate';
import {
  classifyStartFailure,
  freeBytes,
  DEFAULT_STOP_GRACE_SEC,
  dockerAnswers,
  fileSize,
  harborCwd,
  harborEnv,
  JOB_ENV,
  readSince,
  usesLocalDocker,
} from './harbor-process';
import { harborJobFiles, runPaths } from '../model/paths';
import { asActivityFailure } from '../model/errors';
import type { Deployment } from '../infra/deployment';
import { forgetGroup, hostId, recordGroup } from '../infra/host-groups';
import { readEnvFile } from '../infra/env-file';

export interface RunTaskInput {
  runDir: string;
  task: string;
  worktree: string;
  settings: EvalSettings;
  /** Where the candidate comes from, so any worker can materialize `worktree` (absent in older histories). */
  candidate?: CandidateSource;
}

/** What a worker needs to check a candidate out on its own host. */
export interface CandidateSource {
  agentRepo: string;
  commit: string;
  home: string;
}

/** The run's own dirs and the candidate's checkout exist on this worker (made here when missing). */
export async function onThisHost(runDir: string, worktree: string, candidate?: CandidateSource): Promise<void> {
  fs.mkdirSync(runDir, { recursive: true });
  if (fs.existsSync(worktree)) return;
  if (!candidate) {
    throw ApplicationFailure.retryable(`the candidate checkout ${worktree} is missing on this worker`, FailureType.GitError);
  }
  await materializeCandidate(candidate.agentRepo, candidate.commit, candidate.home);
}

interface PidFile {
  pid: number;
  host: string;
  /** When that harbor started (ms since epoch): an adopted run keeps its original deadline. */
  startedAt?: number;
}

/** What a runTask attempt carries to the next one in its heartbeat details (Temporal keeps the last). */
interface Progress {
  attempt: number;
  trialsWithResults: number;
  /**
   * Attempts that ended because Harbor produced no rewarded trial. Only these count against
   * `task_attempts`; an attempt lost to a crash of our own worker does not.
   */
  harborFailures: number;
}

function processHasEnv(pid: number, key: string, value: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`${key}=${value}`);
  } catch {
    return false;
  }
}

/**
 * A previous attempt's harbor that still runs on this host (its worker was SIGKILLed; detached groups
 * survive), identified by its pid file and the job-dir marker in its environment. Adopting it, instead of
 * stopping it and starting again, costs no repeated trial time; two harbor processes never share a job dir.
 */
export function liveOrphan(jobDir: string, pidFile: string): PidFile | null {
  let prev: PidFile;
  try {
    prev = JSON.parse(fs.readFileSync(pidFile, 'utf8')) as PidFile;
  } catch {
    return null;
  }
  if (prev.host !== hostId() || !groupAlive(prev.pid) || !processHasEnv(prev.pid, JOB_ENV, jobDir)) return null;
  return prev;
}

/** Whether harbor finished the job (the job-level result.json has its finished_at). */
function jobFinished(jobDir: string): boolean {
  try {
    return Boolean((JSON.parse(fs.readFileSync(harborJobFiles.result(jobDir), 'utf8')) as { finished_at?: unknown }).finished_at);
  } catch {
    return false;
  }
}

/** Failures counted by earlier attempts: the last heartbeat's details, or this host's record of them. */
function previousHarborFailures(details: unknown, file: string): number {
  const fromHeartbeat = (details as Partial<Progress> | undefined)?.harborFailures ?? 0;
  let fromFile = 0;
  try {
    fromFile = Number(fs.readFileSync(file, 'utf8')) || 0;
  } catch {
    /* none recorded here */
  }
  return Math.max(fromHeartbeat, fromFile);
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
    const file = harborJobFiles.trialResult(jobDir, e.name);
    if (!fs.existsSync(file)) continue;
    const r = readTrialFile(file, jobDir);
    const keep = 'trial' in r && rewardsOf(r.trial.result) !== null;
    if (!keep) {
      fs.rmSync(path.join(jobDir, e.name), { recursive: true, force: true });
      removed.push(e.name);
    }
  }
  return removed;
}

function countTrialResults(jobDir: string): number {
  try {
    return fs.readdirSync(jobDir).filter((d) => fs.existsSync(harborJobFiles.trialResult(jobDir, d))).length;
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
  if (s.isolation.envFile) Object.assign(env, readEnvFile(s.isolation.envFile));
  const user = s.isolation.runAs ? lookupUser(s.isolation.runAs) : null;
  if (user && process.getuid?.() === 0) {
    for (const d of dirs) chownTree(d, user.uid, user.gid);
    return { env: { ...env, HOME: user.home, ...base }, cleanEnv: true, uid: user.uid, gid: user.gid };
  }
  return { env: { ...env, HOME: process.env.HOME ?? '/', ...base }, cleanEnv: true };
}

function harborVersionOf(jobDir: string): string | null {
  try {
    const lock = JobLock.safeParse(JSON.parse(fs.readFileSync(harborJobFiles.lock(jobDir), 'utf8')));
    return lock.success ? (lock.data.harbor?.version ?? null) : null;
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Free space that counts as "the disk has room again" after harbor failed on a full disk. */
const MIN_FREE_BYTES = 256 * 1024 * 1024;

export async function runTask(input: RunTaskInput, deployment?: Deployment): Promise<TaskResult> {
  const ctx = Context.current();
  const attempt = ctx.info.attempt;
  const s = input.settings;
  const paths = runPaths(input.runDir);
  const jobsDir = paths.jobsDir;
  const jobName = jobNameFor(input.task);
  const { dir: jobDir, harborLog: logFile, pidFile, failuresFile } = paths.job(jobName);
  const graceMs = (s.stopGraceSec ?? DEFAULT_STOP_GRACE_SEC) * 1000;
  await onThisHost(input.runDir, input.worktree, input.candidate);
  fs.mkdirSync(jobsDir, { recursive: true });
  const cwd = harborCwd(input.runDir);
  const env = harborEnv(s, input.worktree, jobDir);
  const cleanUp = async (why: string) => {
    if (!usesLocalDocker(s)) return;
    const removed = await removeJobLeftovers(jobDir, { ...(process.env as Record<string, string>), ...env });
    const n = Object.values(removed).reduce((a, l) => a + l.length, 0);
    if (n) ctx.log.warn(`removed Docker leftovers of stopped trials (${why})`, { task: input.task, ...removed });
  };

  let harborFailures = previousHarborFailures(ctx.info.heartbeatDetails, failuresFile);
  const beat = () => ctx.heartbeat({ attempt, trialsWithResults: countTrialResults(jobDir), harborFailures } satisfies Progress);
  // Not every abort is a cancel. The server timed this attempt out, or no longer knows it (heartbeats lost in a
  // server outage longer than heartbeat_timeout: the attempt was retried meanwhile), or this worker is shutting
  // down (Ctrl-C, SIGTERM): another attempt will run, so harbor is left running for it to adopt rather than its
  // trials thrown away (if none does, the host's orphan reaper stops it). Only a real cancel, or the task
  // timeout, stops it here.
  const leaveForNextAttempt = () => {
    const d = ctx.cancellationDetails;
    return d?.timedOut === true || d?.notFound === true || d?.workerShutdown === true;
  };
  const abortWhy = () => {
    const d = ctx.cancellationDetails;
    return d?.workerShutdown
      ? 'this worker is shutting down'
      : d?.notFound
        ? 'the server no longer knows this attempt'
        : 'the server timed the attempt out';
  };
  // A retry (after a worker crash, say) may race a cancellation that only the next heartbeat delivers: ask
  // first, so a cancelled evaluation never starts harbor again.
  if (attempt > 1) {
    beat();
    try {
      await ctx.sleep(1_500);
    } catch (e) {
      // Cancelled while the dead worker's harbor still runs: stop it rather than leave it to finish alone
      // (unless this attempt only lost its worker or its server: then it stays for the next attempt).
      const left = liveOrphan(jobDir, pidFile);
      if (left && !leaveForNextAttempt()) {
        await stopGroup(left.pid, { graceMs, signal: 'SIGTERM', target: 'leader' });
        forgetGroup(left.pid);
        await cleanUp('cancelled');
      }
      throw e;
    }
  }
  const orphan = liveOrphan(jobDir, pidFile);
  // This host's record of the group (worker/orphan-reaper.ts stops groups whose owner died and that no attempt adopts).
  const record = (pid: number, startedAt: number, ownerPid = process.pid) =>
    recordGroup({
      pid,
      host: hostId(),
      ownerPid,
      namespace: ctx.info.workflowNamespace ?? 'default',
      ...(deployment ? { deployment } : {}),
      workflowId: ctx.info.workflowExecution?.workflowId ?? '',
      activityId: ctx.info.activityId,
      attempt,
      jobDir,
      pidFile,
      startedAt,
    });
  // The pid file outlives only a harbor whose worker died; if that harbor already finished the job, collect it.
  const finishedOrphan = !orphan && fs.existsSync(pidFile) && jobFinished(jobDir);
  if (!orphan && !finishedOrphan) {
    const pruned = pruneForResume(jobDir);
    if (pruned.length) ctx.log.info('re-running trials without rewards', { task: input.task, trials: pruned });
  }

  const source = s.source.registry_path
    ? { ...s.source, registry_path: resolvedRegistryFile(s.source.registry_path, input.runDir) }
    : s.source;
  const argv = harborArgv({ harbor: s.harbor, source, task: input.task, jobsDir, jobName, worktree: input.worktree });
  beat();
  const heartbeatEvery = Math.max(200, Math.min(5_000, (s.heartbeatTimeoutSec * 1000) / 4));
  const deadline = (orphan?.startedAt ?? Date.now()) + s.taskTimeoutSec * 1000;
  const notes: string[] = [];
  const logTail = () => tail(logFile, 1500).trim();
  let run: GroupRunResult | undefined;
  if (finishedOrphan) {
    notes.push('collected the job that the harbor of an attempt whose worker died had finished');
    fs.rmSync(pidFile, { force: true });
    run = { exitCode: null, signal: null, timedOut: false, cancelled: false, notFound: false, durationMs: 0, pid: null, forced: false };
  }
  if (orphan) {
    // Adopt the dead worker's harbor: watch it to completion, heartbeating from its progress.
    ctx.log.warn('adopting the still-running harbor of a previous attempt', { task: input.task, pid: orphan.pid });
    notes.push(`adopted the running harbor (pid ${orphan.pid}) of an attempt whose worker died`);
    record(orphan.pid, orphan.startedAt ?? Date.now());
    const adopted = await watchGroup(orphan.pid, {
      signal: ctx.cancellationSignal,
      deadline,
      graceMs,
      onTick: beat,
      detachOnAbort: leaveForNextAttempt,
    });
    if (adopted.detached) {
      ctx.log.warn('harbor left running for the next attempt to adopt', { task: input.task, why: abortWhy() });
      record(orphan.pid, orphan.startedAt ?? Date.now(), 0);
      throw ctx.cancellationSignal.reason ?? new Error('detached');
    }
    forgetGroup(orphan.pid);
    if (adopted.cancelled || adopted.timedOut) await cleanUp(adopted.cancelled ? 'cancelled' : 'task timeout');
    if (adopted.cancelled) throw ctx.cancellationSignal.reason ?? new Error('cancelled');
    fs.rmSync(pidFile, { force: true });
    if (adopted.timedOut || jobFinished(jobDir)) run = adopted;
    else pruneForResume(jobDir); // it died before finishing: resume the job below
  }
  for (let launch = 1; !run; launch++) {
    const iso = isolationFor(s, env, [jobsDir, input.worktree, cwd]);
    const offset = fileSize(logFile);
    fs.appendFileSync(logFile, `\n# vero-harbor attempt ${attempt}.${launch} at ${new Date().toISOString()}: ${JSON.stringify(argv)}\n`);
    const timer = setInterval(beat, heartbeatEvery);
    let r: GroupRunResult;
    try {
      r = await runInGroup(argv, {
        cwd,
        ...iso, // env, cleanEnv, uid, gid
        logFile,
        signal: ctx.cancellationSignal,
        deadline,
        graceMs,
        stopSignal: 'SIGTERM',
        stopTarget: 'leader',
        detachOnAbort: leaveForNextAttempt,
        onStart: (pid) => {
          const startedAt = Date.now();
          fs.writeFileSync(pidFile, JSON.stringify({ pid, host: hostId(), startedAt } satisfies PidFile));
          record(pid, startedAt);
        },
      });
    } finally {
      clearInterval(timer);
    }
    if (r.detached) {
      ctx.log.warn('harbor left running for the next attempt to adopt', { task: input.task, why: abortWhy() });
      if (r.pid !== null) record(r.pid, Date.now(), 0); // no owner now: the reaper stops it if no attempt adopts it
      throw ctx.cancellationSignal.reason ?? new Error('timed out');
    }
    if (r.pid !== null) forgetGroup(r.pid);
    fs.rmSync(pidFile, { force: true });
    if (r.cancelled || r.timedOut) await cleanUp(r.cancelled ? 'cancelled' : 'task timeout');
    if (r.cancelled) throw ctx.cancellationSignal.reason ?? new Error('cancelled');
    if (r.notFound) {
      throw ApplicationFailure.nonRetryable(
        `harbor launcher not found: "${argv[0]}" (harbor.command); is Harbor installed and on PATH?`,
        FailureType.HarborNotFound,
      );
    }
    if (r.timedOut) {
      run = r;
      break;
    }
    if (r.exitCode === 2) {
      throw ApplicationFailure.nonRetryable(`harbor rejected its command line (exit 2): ${logTail()}`, FailureType.HarborUsageError);
    }
    const started = fs.existsSync(harborJobFiles.config(jobDir));
    if (
      r.exitCode === 0 ||
      (started && !/lock\.json that does not match|resumed with a different config/.test(readSince(logFile, offset)))
    ) {
      run = r;
      break;
    }
    const failure = classifyStartFailure(readSince(logFile, offset));
    if (failure.kind === 'stale-job') {
      // Harbor will not resume this job (its task files or config changed since the last attempt): start a
      // fresh one, and keep the old dir for inspection.
      const aside = paths.staleJob(jobName, attempt, launch);
      fs.mkdirSync(path.dirname(aside), { recursive: true });
      fs.renameSync(jobDir, aside);
      notes.push(`harbor refused to resume the job (${failure.reason}); started a fresh job, the old one is at ${aside}`);
      ctx.log.warn('harbor refused to resume; starting a fresh job dir', { task: input.task, reason: failure.reason, aside });
      continue;
    }
    if (failure.kind === 'infrastructure' || failure.kind === 'disk-full') {
      // The host's condition, not the evaluation's: wait in place (heartbeating; a cancel is seen at once) and
      // run harbor again, so no task is failed, and no finished one re-run, for an outage.
      const what = failure.kind === 'disk-full' ? 'disk space' : 'Docker';
      const ready =
        failure.kind === 'disk-full'
          ? async () => (freeBytes(path.dirname(jobDir)) ?? 0) >= MIN_FREE_BYTES
          : async () => usesLocalDocker(s) && (await dockerAnswers(env));
      notes.push(`harbor could not start (${failure.reason}); waited for ${what} and ran it again`);
      ctx.log.warn(`harbor could not start; waiting for ${what}`, { task: input.task, reason: failure.reason });
      for (let wait = 2_000; !(await ready()); wait = Math.min(wait * 2, 60_000)) {
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
      `harbor did not start the job for task "${input.task}" (exit ${r.exitCode ?? r.signal}): ${failure.reason || logTail()}`,
      FailureType.HarborConfigError,
    );
  }

  await faultPause('collate');
  const loaded = loadTrials(jobDir);
  let row;
  try {
    row = collate(loaded.trials, { requested: [input.task], rewardKey: s.rewardKey, aggregate: s.aggregate, invalid: loaded.invalid })[0]!;
  } catch (e) {
    if (e instanceof TaskNameMismatchError) throw asActivityFailure(e); // non-retryable, type TaskNameMismatch
    throw e;
  }
  const how = [
    `harbor exit ${run.exitCode ?? run.signal ?? 'unknown (adopted)'}`,
    ...(run.timedOut ? [`stopped at the task timeout (${s.taskTimeoutSec}s)`] : []),
    ...(loaded.invalid.length
      ? [`${loaded.invalid.length} unreadable result.json (${loaded.invalid[0]!.file}: ${loaded.invalid[0]!.reason})`]
      : []),
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
    trialRewards: row.trialRewards,
    harborVersion: harborVersionOf(jobDir),
    notes,
  };
  if (row.status === 'scored') return result;
  // Harbor ran and produced no rewarded trial: this, and only this, uses up one of `task_attempts`.
  harborFailures += 1;
  fs.writeFileSync(failuresFile, String(harborFailures));
  beat();
  if (harborFailures < s.taskAttempts) {
    throw ApplicationFailure.retryable(
      `task "${input.task}": ${result.error} (attempt ${harborFailures} of ${s.taskAttempts})`,
      FailureType.HarborTaskError,
    );
  }
  return result;
}
