/**
 * `vero retry` on a running evaluation: a Temporal update (validated, recorded in its history) that queues the
 * named tasks, and with `errors` its error rows, to run again once every task of the evaluation has finished.
 * The run then finalizes as always and continues as new with only those tasks and `retryOf` naming its result
 * file (patched 'retry-running'): the run `vero retry` starts for a finished evaluation, so its finalize replaces
 * their rows atomically and the result's `retries` says which and when. A queued retry survives continue-as-new
 * (Continuation.retry) and crashes (it is in the history).
 */
import { defineUpdate } from '@temporalio/workflow';
import type { QueuedRetry } from '../model/evaluation/retry';

export const RETRY_RUNNING_PATCH = 'retry-running';

/** Queues tasks of a running evaluation to run again once its tasks have finished; returns what is queued now. */
export const retryRunningUpdate = defineUpdate<QueuedRetry, [{ tasks?: string[]; errors?: boolean; requestedAt: string }]>('retryTasks');
