/**
 * How long `finalize` can take at worst, so the compiled task's verifier timeout covers it: a verifier that
 * times out loses the reward of a candidate that was fine.
 *
 * Finalize runs its trusted evaluations one after another: up to `auto_best_k` re-scores of the selection split
 * and one of the baseline when `baseline_floor` is set (none when its selection score is pinned) — in auto_best
 * mode, and in submit mode too, which falls back to auto_best's choice when nothing was submitted — then one per
 * target; with `score_baseline`, one of the seed per
 * target without a pinned `baseline_reward`; before all of them, the drain of agent evaluations still running
 * (`drain_timeout`, then their cancellation). A re-score runs up to `rescore_attempts` times, a target's
 * evaluation (and the seed's on it) up to the target's `max_attempts` times. Each run is bounded by its own worst case:
 * - Mode B: the preflight, then ceil(tasks / max_concurrency) waves of tasks, each task at most `timeout` per
 *   attempt for `task_attempts` attempts, plus the retry back-off between attempts;
 * - Mode A: inference and scoring share one `timeout` deadline per activity attempt (3 attempts).
 */
import type { ServeConfig } from './serve-config';

/** Start-up of the finalize request itself (connections, the sidecar's worktrees, writing the result). */
const FINALIZE_STARTUP_SEC = 300;
/** The preflight `harbor run --dry-run` of a Mode B evaluation. */
const PREFLIGHT_SEC = 300;
/** Back-off between two attempts of a task (Temporal's retry interval, capped at 2 min). */
const RETRY_BACKOFF_SEC = 120;
/** After the drain: cancelling the agent evaluations it left (harbor's stop grace and Docker teardown). */
const DRAIN_CANCEL_SEC = 120;
/** evaluateSamples' activity attempts (workflows/evaluate-samples.ts). */
const MODE_A_ATTEMPTS = 3;

/** serve.json's finalize settings (model/compiled-task/serve-config.ts), with what the bound needs of the build. */
export type FinalizePlan = Pick<ServeConfig, 'mode' | 'auto_best_k' | 'rescore_attempts' | 'baseline_floor' | 'selection_split'> & {
  /** The seed's selection score is pinned (`baseline_selection_score`): the floor scores nothing. */
  pinnedSelectionScore?: boolean;
  /** `score_baseline`: the seed is scored on each target without a pinned reward. */
  scoreBaseline?: boolean;
  targets: Pick<ServeConfig['targets'][number], 'split' | 'sample_ids' | 'baseline_reward' | 'max_attempts'>[];
  /** Number of samples (tasks or rows) of each split. */
  splitSizes: Record<string, number>;
  timeoutSec: number;
  /** Finalize first waits this long for agent evaluations still running (`drain_timeout`). */
  drainSec?: number;
  maxConcurrency: number;
  taskAttempts: number;
};

/** The worst case of one trusted evaluation of `samples` samples. */
export function evaluationBoundSec(p: FinalizePlan, samples: number): number {
  if (p.mode === 'A') return MODE_A_ATTEMPTS * p.timeoutSec + (MODE_A_ATTEMPTS - 1) * RETRY_BACKOFF_SEC;
  const waves = Math.ceil(Math.max(samples, 1) / p.maxConcurrency);
  return PREFLIGHT_SEC + waves * (p.taskAttempts * p.timeoutSec + (p.taskAttempts - 1) * RETRY_BACKOFF_SEC);
}

/** The trusted evaluation runs finalize may make, in order (each attempt a run): [split, samples]. */
export function finalizeEvaluations(p: FinalizePlan): [string, number][] {
  const size = (split: string) => p.splitSizes[split] ?? 0;
  const runs = (n: number, e: [string, number]): [string, number][] => Array.from({ length: n }, () => e);
  const rescore = runs(p.rescore_attempts ?? 1, [p.selection_split, size(p.selection_split)]);
  // Both reward modes: submit mode without a submission chooses as auto_best does.
  const selection = [
    ...Array.from({ length: p.auto_best_k }, () => rescore).flat(),
    ...(p.baseline_floor && !p.pinnedSelectionScore ? rescore : []),
  ];
  const target = (t: FinalizePlan['targets'][number]) => runs(t.max_attempts ?? 1, [t.split, t.sample_ids?.length ?? size(t.split)]);
  const seed = p.scoreBaseline ? p.targets.filter((t) => t.baseline_reward === undefined).flatMap(target) : [];
  return [...selection, ...p.targets.flatMap(target), ...seed];
}

/** The verifier timeout (seconds) that covers finalize's worst case. */
export function finalizeBoundSec(p: FinalizePlan): number {
  const drain = p.drainSec ? p.drainSec + DRAIN_CANCEL_SEC : 0;
  return FINALIZE_STARTUP_SEC + drain + finalizeEvaluations(p).reduce((sum, [, n]) => sum + evaluationBoundSec(p, n), 0);
}
