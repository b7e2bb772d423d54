/** An evaluation's result (the evaluateCandidate workflow's), as the result file and the clients read it. */
import type { AttemptStats, ScoreUncertainty } from '../race/uncertainty';
import type { SpendReport } from './spend-cap';
import type { RetryRecord } from './retry';
import type { TaskResult } from './task-result';
import type { Usage } from '../harbor/trial-ranking';

/** completed; failed (error rate ≥ threshold); budget_exhausted (a spend cap kept tasks from running). */
export type EvalStatus = 'completed' | 'failed' | 'budget_exhausted';

export interface CandidateResult {
  evalId: string;
  candidate: string;
  candidateRef: string;
  status: EvalStatus;
  /** Mean over the tasks that ran (all of them unless a spend cap stopped it: see nRun), errors counted as 0. */
  score: number;
  /** Mean over scored tasks only; null when none scored. */
  scoreOfScored: number | null;
  /** The score's standard error and 95% interval over tasks (model/race/uncertainty.ts); absent in older results. */
  uncertainty?: ScoreUncertainty;
  /** With k ≥ 2 trials per task: pass@k, pass^k and the within-task spread (model/race/uncertainty.ts). */
  attempts?: AttemptStats | null;
  errorsCountedAsZero: true;
  nTasks: number;
  nScored: number;
  nErrors: number;
  errorRate: number;
  errorRateThreshold: number;
  configDigest: string;
  resultFile: string;
  /** Per-task results, inline up to INLINE_TASK_LIMIT tasks; read resultFile beyond that. */
  tasks: TaskResult[] | null;
  startedAt: string;
  finishedAt: string;
  /** Cost and tokens summed over all tasks. */
  usage?: Usage;
  /** The Harbor versions that ran the tasks (one, normally). */
  harborVersions?: string[];
  /** Trials, over all tasks, whose reward Harbor's error policy marks not valid (absent when none). */
  nInvalidTrials?: number;
  /** Dataset dirs that are not tasks, with the reason. */
  skippedDirs?: { dir: string; reason: string }[];
  /** The spend caps and what was spent, when a cap was set (model/evaluation/spend-cap.ts). */
  spend?: SpendReport;
  /** Tasks that ran (nTasks − nNotRun): the score's, errorRate's and uncertainty's denominator. */
  nRun?: number;
  /** Each `vero retry` of this evaluation: when, and which tasks ran again (their rows say what they replaced). */
  retries?: RetryRecord[];
}

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
