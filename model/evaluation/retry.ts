/**
 * Retrying chosen tasks of a finished evaluation (`vero retry`): which rows to run again, and how their new rows
 * replace the old ones in the result. Pure. The design: a new run of the same workflow id whose input names only
 * those tasks and the result file it updates (`retryOf`); its finalize merges the new rows into that file.
 */
import { z } from 'zod';
import { ConfigError } from '../errors';
import type { TaskResult } from './task-result';

export const RetryOf = z.strictObject({
  /** The previous run's result file: its rows are kept, but for the retried ones. */
  resultFile: z.string().min(1),
  /** The run whose rows are retried. */
  previousRunId: z.string(),
  /** When the retry was asked for (ISO 8601 UTC). */
  requestedAt: z.string(),
});
export type RetryOf = z.infer<typeof RetryOf>;

/**
 * A retry queued in a running evaluation (workflows/retry-running.ts): the tasks named, whether its error rows
 * too, and when it was first asked for (the retried rows' `retried.at`).
 */
export const QueuedRetry = z.strictObject({
  tasks: z.array(z.string()),
  errors: z.boolean(),
  requestedAt: z.string(),
});
export type QueuedRetry = z.infer<typeof QueuedRetry>;

/** A queued retry with one more request merged in (the first request's time stays). */
export function queueRetry(queued: QueuedRetry | null, req: { tasks?: string[]; errors?: boolean; requestedAt: string }): QueuedRetry {
  const tasks = [...new Set([...(queued?.tasks ?? []), ...(req.tasks ?? [])])];
  return { tasks, errors: (queued?.errors ?? false) || req.errors === true, requestedAt: queued?.requestedAt ?? req.requestedAt };
}

/** Why a retry request of a running evaluation of these tasks is refused (null: it is not). */
export function queuedRetryProblem(allTasks: readonly string[], req: { tasks?: string[]; errors?: boolean }): string | null {
  const known = new Set(allTasks);
  const unknown = (req.tasks ?? []).filter((t) => !known.has(t));
  if (unknown.length) return `--task: not a task of this evaluation: ${unknown.join(', ')}`;
  if (!req.tasks?.length && !req.errors) return 'retry: name tasks with --task NAME…, or --errors (the rows that are errors)';
  return null;
}

/** Why a retry is refused while another `vero retry` of the evaluation runs (that run retries these tasks). */
export const anotherRetryRunning = (tasks: readonly string[]): string =>
  `another vero retry of this evaluation is running (tasks ${tasks.join(', ')}): retry again once it has finished`;

/** The tasks to run again: those named, and with `errors` those whose row is an error. Throws on unknown names. */
export function chooseRetryTasks(
  rows: readonly Pick<TaskResult, 'task' | 'status'>[],
  opts: { tasks?: string[]; errors?: boolean },
): string[] {
  const known = new Set(rows.map((r) => r.task));
  const unknown = (opts.tasks ?? []).filter((t) => !known.has(t));
  if (unknown.length) throw new ConfigError(`--task: not a task of this evaluation: ${unknown.join(', ')}`);
  if (!opts.tasks?.length && !opts.errors)
    throw new ConfigError('retry: name tasks with --task NAME…, or --errors (the rows that are errors)');
  const chosen = new Set([...(opts.tasks ?? []), ...(opts.errors ? rows.filter((r) => r.status === 'error').map((r) => r.task) : [])]);
  return rows.map((r) => r.task).filter((t) => chosen.has(t));
}

/** The previous rows with the retried ones replaced by their new rows (each saying what it replaced, and when). */
export function mergeRetried(previous: readonly TaskResult[], retried: readonly TaskResult[], at: string): TaskResult[] {
  const fresh = new Map(retried.map((r) => [r.task, r]));
  return previous.map((old) => {
    const row = fresh.get(old.task);
    if (!row) return old;
    const { retried: _older, ...now } = row;
    return { ...now, retried: { at, previous: { status: old.status, score: old.score, error: old.error } } };
  });
}
