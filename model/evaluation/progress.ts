/** An evaluation's progress: the workflows' query state, and what `vero status` reports of a closed one. */
import type { z } from 'zod';
import type { ProgressJson } from '../cli-json';
import type { TaskResult } from './task-result';
import type { CandidateResult } from './candidate-result';

/** A progress as `vero status` reports it: a closed evaluation's phase is how it ended; `stopped` counts tearing-down tasks too. */
export type SettledProgress = z.infer<typeof ProgressJson>;

/** The workflows' query state: where a running evaluation is (a closed one's phase is settled by `settledProgress`). */
export type Progress = Omit<SettledProgress, 'phase' | 'stopped'> & {
  phase: 'preparing' | 'running' | 'finalizing' | 'done' | 'cancelling';
};

/**
 * What a closed evaluation's last progress snapshot means now: nothing runs any more (a cancelled or failed
 * workflow answers the query with the state it stopped in). `stopped` counts the tasks that were running.
 */
export function settledProgress(p: Progress, workflowStatus: string): SettledProgress {
  if (workflowStatus === 'RUNNING') return p;
  const phase = CLOSED_PHASE[workflowStatus] ?? p.phase;
  const live = p.running + (p.tearingDown ?? 0);
  if (live === 0) return { ...p, phase };
  return { ...p, phase, running: 0, ...(p.tearingDown ? { tearingDown: 0 } : {}), stopped: live, runningChunks: [], currentChunk: null };
}

/** The phase of a closed evaluation, by its workflow status: it says how it ended, not where it was. */
const CLOSED_PHASE: Record<string, SettledProgress['phase']> = {
  COMPLETED: 'done',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
};

/** A fresh progress record (the workflows' query state). */
export function newProgress(total: number, phase: Progress['phase']): Progress {
  return { total, done: 0, running: 0, scored: 0, errors: 0, scoreSum: 0, phase, currentChunk: null };
}

/**
 * A finished evaluation's progress, counted from its result: every row of the evaluation, also after a `vero retry`
 * (whose run ran only the retried tasks, and whose result holds them all).
 */
export function settleFromResult(
  progress: Progress,
  result: Pick<CandidateResult, 'nTasks' | 'nScored' | 'nErrors' | 'scoreOfScored' | 'spend'>,
): void {
  const notRun = result.spend?.nNotRun ?? 0;
  Object.assign(progress, { total: result.nTasks, done: result.nTasks, running: 0, scored: result.nScored, errors: result.nErrors });
  progress.scoreSum = (result.scoreOfScored ?? 0) * result.nScored;
  if (notRun) progress.notRun = notRun;
}

/** Counts a finished task's row into a chunk's progress. */
export function countFinished(progress: Progress, row: TaskResult): void {
  progress.done++;
  if (row.status === 'scored') {
    progress.scored++;
    progress.scoreSum += row.score ?? 0;
  } else if (row.status === 'not_run') progress.notRun = (progress.notRun ?? 0) + 1;
  else progress.errors++;
}

/** The counts one part of an evaluation (a chunk) adds to a progress. */
export type ProgressCounts = Pick<Progress, 'done' | 'running' | 'tearingDown' | 'scored' | 'errors' | 'scoreSum' | 'notRun'>;

/** Adds a part's counts into `sum` (in place) and returns it. */
export function addCounts<P extends ProgressCounts>(sum: P, c: ProgressCounts): P {
  sum.done += c.done;
  sum.running += c.running;
  sum.scored += c.scored;
  sum.errors += c.errors;
  sum.scoreSum += c.scoreSum;
  if (c.notRun) sum.notRun = (sum.notRun ?? 0) + c.notRun;
  if (c.tearingDown) sum.tearingDown = (sum.tearingDown ?? 0) + c.tearingDown;
  return sum;
}
