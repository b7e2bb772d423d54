/** Uncertainty of a score over tasks, against closed forms and published t quantiles. */
import { attemptStats, passAtK, passHatK, scoreUncertainty, separable } from '../../model/race/uncertainty';

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

test('pass@k and pass^k: the unbiased estimators against their closed forms', () => {
  // n = 5 attempts, c = 2 pass, k = 2: pass@2 = 1 − C(3,2)/C(5,2) = 1 − 3/10; pass^2 = C(2,2)/C(5,2) = 1/10.
  expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 12);
  expect(passHatK(5, 2, 2)).toBeCloseTo(0.1, 12);
  // k = 1 is the pass rate, both ways; all pass or none pass are 1 and 0.
  expect(passAtK(10, 3, 1)).toBeCloseTo(0.3, 12);
  expect(passHatK(10, 3, 1)).toBeCloseTo(0.3, 12);
  expect(passAtK(4, 4, 3)).toBe(1);
  expect(passHatK(4, 0, 2)).toBe(0);
  // Chen et al.'s example scale: n = 200, c = 10, k = 100 is near-certain; against the log-space binomials.
  const logC = (n: number, k: number) => Array.from({ length: k }, (_, i) => Math.log((n - i) / (k - i))).reduce((a, b) => a + b, 0);
  expect(passAtK(200, 10, 100)).toBeCloseTo(1 - Math.exp(logC(190, 100) - logC(200, 100)), 12);
});

test('attempt statistics of an evaluation: k is the fewest attempts, an errored task fails, old results give none', () => {
  const stats = attemptStats([[1, 1, 0], [0, 0, 0], [1, 0], []]);
  expect(stats).toMatchObject({ k: 2, nTasks: 4 });
  // Per task pass@2: 1 − C(1,2)/C(3,2) = 1; 0; 1 − C(1,2)/C(2,2) = 1; 0 → mean 0.5.
  expect(stats!.passAtK).toBeCloseTo(0.5, 12);
  // pass^2: C(2,2)/C(3,2) = 1/3; 0; 0; 0 → 1/12.
  expect(stats!.passHatK).toBeCloseTo(1 / 12, 12);
  expect(stats!.withinTaskSd).toBeCloseTo((Math.sqrt(1 / 3) + 0 + Math.sqrt(0.5)) / 3, 12);
  expect(attemptStats([[1], [0]])).toBeNull(); // one attempt: nothing to say
  expect(attemptStats([[1, 1], null])).toBeNull(); // a result recorded before trial rewards were kept
});
