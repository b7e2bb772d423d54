/** Uncertainty of a score over tasks, against closed forms and published t quantiles. */
import { scoreUncertainty, separable } from '../../model/uncertainty';

test('the 95% interval of a mean over tasks: Student’s t with n − 1 degrees of freedom', () => {
  // 4 of 6 tasks solved: mean 2/3, sample sd √(4/15), t(0.975, 5) = 2.5706 (standard tables).
  const u = scoreUncertainty([1, 0, 1, 1, 0, 1]);
  const se = Math.sqrt(4 / 15) / Math.sqrt(6);
  expect(u.n).toBe(6);
  expect(u.mean).toBeCloseTo(2 / 3, 12);
  expect(u.stdErr).toBeCloseTo(se, 12);
  expect(u.ci95![0]).toBeCloseTo(2 / 3 - 2.5706 * se, 3);
  expect(u.ci95![1]).toBe(1); // 2/3 + 0.542 is clipped to the score's range
  // Large n: t approaches the normal quantile 1.96.
  const many = scoreUncertainty(Array.from({ length: 10_000 }, (_, i) => (i % 2 ? 1 : 0)));
  expect((many.ci95![1] - many.mean) / many.stdErr!).toBeCloseTo(1.9602, 3);
});

test('fewer than two tasks have no interval; overlapping intervals are not separable', () => {
  expect(scoreUncertainty([0.5])).toEqual({ n: 1, mean: 0.5, stdErr: null, ci95: null });
  expect(scoreUncertainty([])).toEqual({ n: 0, mean: 0, stdErr: null, ci95: null });
  const a = scoreUncertainty([1, 1, 1, 0, 1, 1]);
  const b = scoreUncertainty([1, 0, 1, 0, 1, 0]);
  expect(separable(a, b)).toBe(false); // 5/6 vs 3/6 on six tasks: not told apart
  const hi = scoreUncertainty(Array.from({ length: 200 }, (_, i) => (i % 10 ? 1 : 0)));
  const lo = scoreUncertainty(Array.from({ length: 200 }, (_, i) => (i % 10 < 5 ? 1 : 0)));
  expect(separable(hi, lo)).toBe(true); // 0.9 vs 0.5 on 200 tasks
  expect(separable(scoreUncertainty([1]), lo)).toBe(false);
});
