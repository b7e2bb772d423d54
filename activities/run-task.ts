/**
 * One task = one nested `harbor run`. The job dir is fixed for (evaluation run, task), so a retried activity
 * (after a crash, a timeout or an infrastructure error) resumes Harbor's job: scored trials are kept and
 * only missing or infra-failed ones run again.
 *
 * runTask is a protocol of named steps: prepare the attempt → stop a cancelled retry → collect or adopt a
 * previous attempt's harbor, else launch (harbor/launch.ts) → settle the attempt (collate, count a failure).
 */
import { collate, collatedRow, loadTrials, TaskNameMismatchError } from '../harbor/collate';
import type { Deployment } from '../infra/deployment';
import { forgetGroup } from '../infra/host-groups';
import { GroupRunResult, stopGroup, watchGroup } from '../infra/process-group';
import { asActivityFailure, typedFailure } from '../model/errors';
import type { CandidateSource, RunTaskInput } from '../model/evaluation/activity-payloads';
import { inRowOrder, type TaskResult } from '../model/evaluation/task-result';
import { FailureType } from '../model/failures';
import { unsupportedHarborWarning } from '../model/harbor/version';
import { faultPause } from './fault-pause';
import { resumedAcrossVersionsNote } from '../model/harbor/job-versions';
import { launchUntilSettled, settleHarborEnding } from '../harbor/launch';
import {
  ensureDir,
  hasPidFile,
  jobComplete,
  jobFinished,
  jobHarborVersion,
  liveOrphan,
  prunedUsage,
  pruneForResume,
  removePidFile,
} from '../harbor/orphans';
import { isCheckedOut } from '../infra/git';
import { addUsage } from '../model/harbor/trial-ranking';
import { materializeCandidate } from './prepare-candidate';
import { type AttemptHooks, TaskAttempt } from '../harbor/task-attempt';
import { CancelledFailure, Context } from '@temporalio/activity';
import { TASK_WORK_DONE_SIGNAL, type TaskWorkDone } from '../model/evaluation/lane-teardown';
import { watchWorkDone } from '../harbor/work-done';
import { cutStopWaits } from '../harbor/stop-wait';

export type { CandidateSource, RunTaskInput };

/** The run's own dirs and the candidate's checkout exist on this worker (made here when missing). */
export async function onThisHost(runDir: string, worktree: string, candidate?: CandidateSource): Promise<void> {
  ensureDir(runDir);
  if (isCheckedOut(worktree)) return;
  if (!candidate) {
    throw typedFailure(FailureType.GitError, `the candidate checkout ${worktree} is missing on this worker`);
  }
  await materializeCandidate(candidate.agentRepo, candidate.commit, candidate.home);
}

const ADOPTED_OR_COLLECTED: GroupRunResult = {
  exitCode: null,
  signal: null,
  timedOut: false,
  cancelled: false,
  notFound: false,
  durationMs: 0,
  pid: null,
  forced: false,
};

/**
 * A retry (after a worker crash, say) may race a cancellation that only the next heartbeat delivers: ask first,
 * so a cancelled evaluation never starts harbor again. Cancelled while the dead worker's harbor still runs: stop
 * it rather than leave it to finish alone (unless this attempt only lost its worker or its server: then it stays
 * for the next attempt).
 */
async function stopIfCancelledRetry(t: TaskAttempt): Promise<void> {
  t.beat();
  try {
    await t.ctx.sleep(1_500);
  } catch (e) {
    const left = liveOrphan(t.jobDir, t.pidFile);
    if (left && !t.leaveForNextAttempt()) {
      await stopGroup(left.pid, { graceMs: t.graceMs, signal: 'SIGTERM', target: 'leader' });
      forgetGroup(left.pid);
      await t.cleanUp('cancelled');
    }
    throw e;
  }
}

/**
 * What a previous attempt left: a harbor that finished the job without its worker, or a finished job with every
 * trial rewarded (collect it), or one still running (adopt it: watch it to completion, heartbeating from its
 * progress). Returns the run to collect, or
 * null to launch — the job then resumes with its unrewarded trials pruned. Also the task's deadline: an adopted
 * harbor keeps its original one.
 */
async function collectOrAdopt(t: TaskAttempt): Promise<{ run: GroupRunResult | null; deadline: number }> {
  const orphan = liveOrphan(t.jobDir, t.pidFile);
  const deadline = (orphan?.startedAt ?? Date.now()) + t.s.taskTimeoutSec * 1000;
  // The pid file outlives only a harbor whose worker died; if that harbor already finished the job, collect it.
  if (!orphan && hasPidFile(t.pidFile) && jobFinished(t.jobDir)) {
    t.notes.push('collected the job that the harbor of an attempt whose worker died had finished');
    removePidFile(t.pidFile);
    return { run: ADOPTED_OR_COLLECTED, deadline };
  }
  if (!orphan) {
    const pruned = pruneForResume(t.jobDir, t.prunedUsageFile);
    if (pruned.length) t.ctx.log.info('re-running trials without rewards', { task: t.task, trials: pruned });
    // A job harbor finished with every trial rewarded (an evaluation reset after the task ran, say): collected,
    // not run again.
    if (!pruned.length && jobComplete(t.jobDir)) {
      t.notes.push('collected the job harbor had finished before (nothing left to run)');
      return { run: ADOPTED_OR_COLLECTED, deadline };
    }
    return { run: null, deadline };
  }
  t.ctx.log.warn('adopting the still-running harbor of a previous attempt', { task: t.task, pid: orphan.pid });
  t.notes.push(`adopted the running harbor (pid ${orphan.pid}) of an attempt whose worker died`);
  t.record(orphan.pid, orphan.startedAt ?? Date.now());
  t.beat();
  const adopted = await watchGroup(orphan.pid, {
    signal: t.ctx.cancellationSignal,
    deadline,
    graceMs: t.graceMs,
    onTick: t.beat,
    detachOnAbort: t.leaveForNextAttempt,
  });
  await settleHarborEnding(t, adopted, orphan.startedAt);
  if (adopted.timedOut || jobFinished(t.jobDir)) return { run: adopted, deadline };
  pruneForResume(t.jobDir, t.prunedUsageFile); // it died before finishing: resume the job
  return { run: null, deadline };
}

/**
 * The task's row from its job's trials. A row without a rewarded trial uses up one of `task_attempts` (and
 * only such a row does): retried while attempts are left, returned as an error row after the last.
 */
async function settleAttempt(t: TaskAttempt, run: GroupRunResult): Promise<TaskResult> {
  await faultPause('collate');
  const loaded = loadTrials(t.jobDir);
  let row;
  try {
    row = collate(loaded.trials, { requested: [t.task], rewardKey: t.s.rewardKey, aggregate: t.s.aggregate, invalid: loaded.invalid })[0]!;
  } catch (e) {
    if (e instanceof TaskNameMismatchError) throw asActivityFailure(e); // non-retryable, type TaskNameMismatch
    throw e;
  }
  const how = [
    `harbor exit ${run.exitCode ?? run.signal ?? 'unknown (adopted)'}`,
    ...(run.timedOut ? [`stopped at the task timeout (${t.s.taskTimeoutSec}s)`] : []),
    ...(loaded.invalid.length
      ? [`${loaded.invalid.length} unreadable result.json (${loaded.invalid[0]!.file}: ${loaded.invalid[0]!.reason})`]
      : []),
  ].join(', ');
  const harborVersion = jobHarborVersion(t.jobDir);
  const unsupported = unsupportedHarborWarning(harborVersion);
  if (unsupported && !t.notes.includes(unsupported)) t.notes.push(unsupported);
  const resumedAcross = resumedAcrossVersionsNote(loaded.trials, harborVersion);
  if (resumedAcross) t.notes.push(resumedAcross);
  const result: TaskResult = inRowOrder({
    ...collatedRow(row, t.jobDir),
    runs: t.attempt,
    timedOut: run.timedOut,
    error: row.status === 'error' ? `${row.error}; ${how}` : null,
    // Every trial that ran: those still in the job, and those removed before a retry (they cost money too).
    usage: addUsage(row.usage, prunedUsage(t.prunedUsageFile)),
    harborVersion,
    notes: t.notes,
  });
  if (row.status === 'scored') return result;
  t.countHarborFailure();
  if (t.harborFailures < t.s.taskAttempts) {
    const message = `task "${t.task}": ${result.error} (attempt ${t.harborFailures} of ${t.s.taskAttempts})`;
    // One line: retrying is the plan, not an incident (the SDK logs this BENIGN failure only at DEBUG).
    t.ctx.log.warn(`${message}; retrying`);
    throw typedFailure(FailureType.HarborTaskError, message);
  }
  return result;
}

/** The attempt's hooks, from this activity's Temporal context: heartbeats, cancellation, its log, the work-done signal. */
function attemptHooks(): AttemptHooks {
  const ctx = Context.current();
  return {
    info: ctx.info,
    heartbeat: (details) => ctx.heartbeat(details),
    cancellationSignal: ctx.cancellationSignal,
    get cancellationDetails() {
      return ctx.cancellationDetails;
    },
    sleep: (ms) => ctx.sleep(ms),
    log: ctx.log,
    cancelled: (message) => new CancelledFailure(message),
    signalWorkDone: async (done) => {
      const run = ctx.info.workflowExecution!; // (the attempt signals only when it has one)
      await ctx.client.workflow.getHandle(run.workflowId, run.runId).signal<[TaskWorkDone]>(TASK_WORK_DONE_SIGNAL, done);
    },
  };
}

export async function runTask(input: RunTaskInput, deployment?: Deployment): Promise<TaskResult> {
  const t = new TaskAttempt(input, attemptHooks(), deployment);
  await onThisHost(input.runDir, input.worktree, input.candidate);
  ensureDir(t.paths.jobsDir);
  if (t.attempt > 1) await stopIfCancelledRetry(t);
  // The lane is released as soon as every trial's reward is on disk (harbor/work-done.ts), not at the next tick.
  const unwatch = input.reportsWorkDone ? watchWorkDone(t.jobDir, t.s.harbor.n_attempts, t.beat) : () => undefined;
  const uncut = cutStopWaits(t); // Docker's stop wait, cut where it can only be a wait (harbor/stop-wait.ts)
  try {
    const { run, deadline } = await collectOrAdopt(t);
    // (awaited here: the finally awaits too, and a rejection left pending meanwhile would be unhandled)
    return await settleAttempt(t, run ?? (await launchUntilSettled(t, deadline)));
  } finally {
    unwatch();
    await uncut();
  }
}
