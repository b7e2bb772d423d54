/** An evaluation's result (the evaluateCandidate workflow's), as the result file and the clients read it. */
import type { z } from 'zod';
import type { CandidateResultJson } from '../cli-json';
import type { TaskResult } from './task-result';

/** An evaluation's result as `--json` prints it (model/cli-json.ts), its rows the stored ones (TaskResult). */
export type CandidateResult = Omit<z.infer<typeof CandidateResultJson>, 'tasks'> & { tasks: TaskResult[] | null };
export type EvalStatus = CandidateResult['status'];

export const INLINE_TASK_LIMIT = 1000;

/** What rankResults ranks by, as `vero best` and `vero compare` say it: a vero.yaml evaluation has no constraints. */
export const EVALUATION_RANKING = {
  metric: 'score',
  direction: 'maximize',
  constraints: [] as string[],
  meaning: "the mean over the tasks that ran of each task's reward (its attempts aggregated as the config says; an error counts 0)",
  ties: 'fewer errors, then the earlier start',
} as const;

/**
 * The one ranking of evaluations (`vero best`, its runner-up, `vero report`, the library's pickBest): highest score,
 * then fewer errors, then earlier start, then id. A spend cap's partial evaluation scores only the tasks it ran:
 * not comparable, not ranked.
 */
export function rankResults<R extends Pick<CandidateResult, 'status' | 'score' | 'nErrors' | 'startedAt' | 'evalId'>>(results: R[]): R[] {
  return results
    .filter((r) => r.status !== 'budget_exhausted')
    .sort(
      (a, b) => b.score - a.score || a.nErrors - b.nErrors || a.startedAt.localeCompare(b.startedAt) || a.evalId.localeCompare(b.evalId),
    );
}
