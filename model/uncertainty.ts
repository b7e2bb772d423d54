/**
 * How sure a score is. An evaluation's score is the mean over its tasks (errors counted as 0, as the score
 * is), so its uncertainty is that of a mean over tasks: the standard error and a 95% interval from Student's t
 * with n − 1 degrees of freedom (jstat). Two evaluations whose intervals overlap are not told apart at 95%.
 */
import { jStat } from 'jstat';

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
