/**
 * Every workflow history of an evaluation stays bounded whatever its task count. Temporal warns at 10,240
 * events or 10 MB per history and fails it at 51,200 events or 50 MB; one payload may not exceed 2 MB.
 *
 * - A chunk (child workflow) holds about 4 events per task, and `chunk_size` is at most 1,000.
 * - The parent (evaluateCandidate) holds no task's row unless the whole evaluation is small enough to inline
 *   them (INLINE_TASK_LIMIT): chunks return only their summary, the rows stay in their files and histories.
 * - The parent records at most about 24 + 3 × concurrency events per chunk (a start, a completion, and the lanes each
 *   chunk hands back as it drains), so after `chunksPerRun` chunks it lets the running ones finish and
 *   continues as new: each run of the parent holds at most that many chunks, and the evaluation any number.
 *   A spend-capped evaluation also records each task's spend report (MeteredChunks), and each chunk reports its
 *   progress at most MAX_PROGRESS_REPORTS times (a signal and its workflow task: 4 events at worst).
 * - The task names travel in the evaluation's input (once per run), which must fit one payload.
 *
 * The figures are measured by `bench/scale.ts` and recorded in docs/benchmarks.md.
 */

import { MAX_PROGRESS_REPORTS } from './progress-details';

/** Events one run of the parent may hold before it continues as new (Temporal warns at 10,240). */
export const PARENT_EVENT_BUDGET = 8000;

/**
 * Parent events per chunk at a given concurrency, an upper bound of what bench/scale.ts measured: 19.6 at
 * concurrency 4, 64 at 16 and 147 at 64 (chunks of 100 tasks), 68.4 at 16 (chunks of 500, 100k tasks).
 */
export const parentEventsPerChunk = (concurrency: number, metered?: MeteredChunks, progressReports = false): number =>
  24 + 3 * concurrency + (metered ? metered.chunkSize * (metered.pooled ? 7 : 4) : 0) + (progressReports ? 4 * MAX_PROGRESS_REPORTS : 0);

/**
 * A spend-capped evaluation's chunks report each task's spend to the parent: a signal and its workflow task
 * (4 events per task, at worst), and with a spend pool the parent's forward to it (3 more).
 */
export interface MeteredChunks {
  chunkSize: number;
  pooled: boolean;
}

/** Chunks one run of the parent starts before it continues as new: the setting, else what fits the budget. */
export function chunksPerRun(concurrency: number, setting?: number, metered?: MeteredChunks, progressReports = false): number {
  return setting ?? Math.max(1, Math.floor(PARENT_EVENT_BUDGET / parentEventsPerChunk(concurrency, metered, progressReports)));
}

/** Temporal's default limit on one payload (the evaluation input holds every task name) is 2 MiB; keep a margin. */
export const MAX_INPUT_BYTES = 1.5 * 2 ** 20;

/**
 * Why an evaluation of these task names cannot start (its input would not fit one payload), or null. The reason
 * is for a person: it names the limit and how to stay within it.
 */
export function inputSizeProblem(tasks: readonly string[]): string | null {
  const bytes = new TextEncoder().encode(JSON.stringify(tasks)).length;
  if (bytes <= MAX_INPUT_BYTES) return null;
  const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
  return `the names of ${tasks.length} tasks take ${mib(bytes)}, more than the ${mib(MAX_INPUT_BYTES)} an evaluation's input may hold (Temporal's payload limit is 2 MiB); split the dataset with tasks.names or tasks.include into several evaluations`;
}
