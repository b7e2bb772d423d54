/**
 * How sure a score is. An evaluation's score is the mean over its tasks (errors counted as 0, as the score
 * is), so its uncertainty is that of a mean over tasks: the standard error and a 95% interval from Student's t
 * with n − 1 degrees of freedom (jstat). Two evaluations whose intervals overlap are not told apart at 95%.
 */
import { jStat } from 'jstat';
import type { z } from 'zod';
import type { AttemptsJson } from '../cli-json';

export interface ScoreUncertainty {
  /** Tasks the mean is over (errors included, as 0). */
  n: number;
  mean: number;
  /** Sample standard deviation / √n; null with fewer than 2 tasks. */
  stdErr: number | null;
  /** [low, high], clipped to [0, 1]; null with fewer than 2 tasks. */
  ci95: [number, number] | null;
}

const clip = (x: number) => Math.min(1, Math.max(0, x));

export function scoreUncertainty(scores: number[]): ScoreUncertainty {
  const n = scores.length;
  const mean = n ? scores.reduce((a, b) => a + b, 0) / n : 0;
  if (n < 2) return { n, mean, stdErr: null, ci95: null };
  const stdErr = jStat.stdev(scores, true) / Math.sqrt(n);
  const half = jStat.studentt.inv(0.975, n - 1) * stdErr;
  return { n, mean, stdErr, ci95: [clip(mean - half), clip(mean + half)] };
}

/** Whether two scores are told apart at 95%: their intervals do not overlap (unknown intervals never are). */
export function separable(a: ScoreUncertainty, b: ScoreUncertainty): boolean {
  if (!a.ci95 || !b.ci95) return false;
  return a.ci95[0] > b.ci95[1] || b.ci95[0] > a.ci95[1];
}

/**
 * What k attempts per task say (Harbor's `n_attempts`): the unbiased estimators of pass@k (at least one of k
 * attempts passes; Chen et al. 2021) and pass^k (all k pass; τ-bench), averaged over tasks, and the spread of a
 * task's rewards across its attempts. A trial passes at reward ≥ 1. k is the fewest rewarded trials of any
 * task that has trial rewards; a task that errored (no rewarded trial) counts as failing.
 */
export type AttemptStats = z.infer<typeof AttemptsJson>;

/** C(n − c, k) / C(n, k) as a product, exact enough for any n a benchmark has. */
function noneOfKPass(n: number, c: number, k: number): number {
  if (n - c < k) return 0;
  let p = 1;
  for (let i = 0; i < k; i++) p *= (n - c - i) / (n - i);
  return p;
}

export const passAtK = (n: number, c: number, k: number): number => 1 - noneOfKPass(n, c, k);

/** C(c, k) / C(n, k). */
export function passHatK(n: number, c: number, k: number): number {
  if (c < k) return 0;
  let p = 1;
  for (let i = 0; i < k; i++) p *= (c - i) / (n - i);
  return p;
}

/**
 * Per task: its rewarded trials' rewards, [] for a task that errored, null when unknown (a result recorded
 * before rewards were kept). Null unless some task has 2 or more trials.
 */
export function attemptStats(perTask: (number[] | null)[]): AttemptStats | null {
  if (perTask.some((t) => t === null)) return null;
  const tasks = perTask as number[][];
  const withTrials = tasks.filter((t) => t.length > 0);
  if (withTrials.length === 0) return null;
  const k = Math.min(...withTrials.map((t) => t.length));
  if (k < 2) return null;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const passes = (t: number[]) => t.filter((r) => r >= 1).length;
  return {
    k,
    passAtK: mean(tasks.map((t) => (t.length ? passAtK(t.length, passes(t), k) : 0))),
    passHatK: mean(tasks.map((t) => (t.length ? passHatK(t.length, passes(t), k) : 0))),
    withinTaskSd: mean(withTrials.map((t) => jStat.stdev(t, true))),
    nTasks: tasks.length,
  };
}
