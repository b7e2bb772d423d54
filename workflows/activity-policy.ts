/**
 * The policies activities run under, one home each: a candidate's steps (prepare, finalize) in evaluations and
 * races, and one task's activity as chunks and races run it, with what its failure makes of the task's row. A
 * broken task fails the workflow (a config failure); a task whose attempts all failed is an error row, never a
 * silent 0; a cancellation goes up to the scope that asked for it.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { EvalSettings } from '../model/evaluation/input';
import { causeChain } from '../model/errors';
import { CONFIG_FAILURES, FailureType } from '../model/failures';
import { jobNameFor } from '../model/harbor/job-name';
import { runPaths } from '../model/paths';
import { errorRow, type TaskResult } from '../model/evaluation/task-result';

/** A candidate's steps: both heartbeat on a timer, so a dead worker is noticed in seconds, not at the timeout. */
export const stepActivities = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  heartbeatTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '2s', nonRetryableErrorTypes: CONFIG_FAILURES },
});

/** Activity attempts beyond `task_attempts` for a task whose worker died (heartbeat timeouts). */
export const WORKER_CRASH_ALLOWANCE = 10;

/** The activities a task runs as (runTask) and saves with, under the task policy of `s`. */
export function taskActivities(s: EvalSettings) {
  return proxyActivities<Activities>({
    // runTask enforces the task timeout itself (and salvages finished trials); this is the backstop.
    startToCloseTimeout: `${Math.ceil(s.taskTimeoutSec + 120)}s`,
    heartbeatTimeout: `${s.heartbeatTimeoutSec}s`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      // runTask counts Harbor's failures itself (carried in its heartbeat details) against task_attempts; the
      // extra attempts absorb crashes of our own workers, which must not use up a task's attempts.
      maximumAttempts: s.taskAttempts + WORKER_CRASH_ALLOWANCE,
      initialInterval: '2s',
      backoffCoefficient: 2,
      maximumInterval: '2m',
      nonRetryableErrorTypes: CONFIG_FAILURES,
    },
  });
}

/** The job harbor wrote (or began) for a task: its logs say why it failed. */
export function taskJobDir(runDir: string, task: string): string {
  return runPaths(runDir).job(jobNameFor(task)).dir;
}

function configFailure(err: unknown): ApplicationFailure | null {
  const cause = err instanceof ActivityFailure ? err.cause : null;
  return cause instanceof ApplicationFailure && cause.type && (CONFIG_FAILURES as string[]).includes(cause.type) ? cause : null;
}

/**
 * The row of a task whose activity failed: an error row once its attempts are exhausted (timeouts, crashes).
 * A cancellation is rethrown, and a config failure fails the workflow (the task is broken, not the candidate).
 * `requeued`: the caller runs the task again (a pause stopped it, whatever its attempt's failure): null.
 */
export function failedTaskRow(err: unknown, task: string, attempts: number, jobDir: string): TaskResult;
export function failedTaskRow(err: unknown, task: string, attempts: number, jobDir: string, requeued: () => boolean): TaskResult | null;
export function failedTaskRow(err: unknown, task: string, attempts: number, jobDir: string, requeued = () => false): TaskResult | null {
  if (isCancellation(err)) throw err;
  const fatal = configFailure(err);
  if (fatal) throw ApplicationFailure.nonRetryable(`task "${task}": ${fatal.message}`, fatal.type ?? FailureType.HarborConfigError);
  if (requeued()) return null;
  return errorRow(task, causeChain(err), attempts, jobDir);
}

/** Whether a task's failure is the cancel of its own scope alone (`byItsOwner`: a pause, an elimination), not the workflow's. */
export function stoppedAlone(err: unknown, byItsOwner: boolean): boolean {
  return isCancellation(err) && byItsOwner && !CancellationScope.current().consideredCancelled;
}
