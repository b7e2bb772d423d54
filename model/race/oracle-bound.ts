/**
 * An upper bound on what any valid sequential test can save on one evaluation (pure; the benches print it).
 *
 * The evaluation runs up to n cases, a paired difference D per case drawn from the true law Q (model/race/oracle-sprt.ts),
 * and may stop before case t only at decision times (the waves: every `wave` cases, and before the first); stopping
 * after t cases saves n − t. A test valid at level α for the null E[D] ≥ m must in particular stop with
 * probability ≤ α under one law P₀ of that null (here p*, the null's law closest to Q). So, for every μ ≥ 0
 * (weak Lagrangian duality),
 *
 *   E_Q[saved] ≤ max_τ E_Q[(n − τ)·1{stop} − μ·1{stop}/Lτ] + μα,   Lₜ = dQ/dP₀ of the first t differences
 *
 * (P₀(stop) = E_Q[1{stop}/Lτ]). The max is an optimal-stopping problem solved exactly by backward induction over
 * the sufficient statistic (t, #(D = +1), #(D = −1)); the bound is its minimum over μ. It holds for any rule, even
 * one that knows Q, randomizes, or is valid only at the n-th case: no anytime rule can save more in expectation.
 */
import { closestNullLaw, type DifferenceLaw } from './oracle-sprt';

/** max_τ E_Q[saving − μ/L at the stop] by backward induction (the Lagrangian's inner problem). */
function lagrangianValue(law: DifferenceLaw, nullLaw: DifferenceLaw, n: number, wave: number, mu: number): number {
  const zero = 1 - law.plus - law.minus;
  const logRatio = (q: number, p: number) => (q > 0 ? Math.log(q / p) : 0);
  const [lp, lm, lz] = [
    logRatio(law.plus, nullLaw.plus),
    logRatio(law.minus, nullLaw.minus),
    logRatio(zero, 1 - nullLaw.plus - nullLaw.minus),
  ];
  let next = new Float64Array(((n + 1) * (n + 2)) / 2); // after n cases: every case ran, nothing saved
  for (let t = n - 1; t >= 0; t--) {
    const here = new Float64Array(((t + 1) * (t + 2)) / 2);
    const decides = t % wave === 0;
    for (let a = 0, row = 0, nextRow = 0; a <= t; a++) {
      // Row a of step t starts at `row`; rows a and a + 1 of step t + 1 at `nextRow` and `nextRow + t + 2 − a`.
      const upRow = nextRow + t + 2 - a;
      for (let b = 0; a + b <= t; b++) {
        const cont = law.plus * next[upRow + b]! + law.minus * next[nextRow + b + 1]! + zero * next[nextRow + b]!;
        const stop = decides ? n - t - mu * Math.exp(-(a * lp + b * lm + (t - a - b) * lz)) : -Infinity;
        here[row + b] = cont > stop ? cont : stop;
      }
      row += t + 1 - a;
      nextRow = upRow;
    }
    next = here;
  }
  return next[0]!;
}

/**
 * The largest expected number of cases (of n) any level-α test of E[D] ≥ margin can save under the law, stopping
 * only at multiples of `wave` cases. A law in the null: α·n (a valid test stops it with probability ≤ α).
 */
export function savingBound(law: DifferenceLaw, margin: number, alpha: number, n: number, wave: number): number {
  const nullLaw = closestNullLaw(law, margin);
  if (law.plus - law.minus >= margin) return alpha * n;
  const dual = (logMu: number) => lagrangianValue(law, nullLaw, n, wave, Math.exp(logMu)) + Math.exp(logMu) * alpha;
  // The dual is convex in μ; on log μ it is unimodal: a coarse grid, then a golden-section search around its best.
  const grid = Array.from({ length: 17 }, (_, i) => -2 + i);
  const values = grid.map(dual);
  const best = values.indexOf(Math.min(...values));
  let [lo, hi] = [grid[Math.max(0, best - 1)]!, grid[Math.min(grid.length - 1, best + 1)]!];
  const phi = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 14; i++) {
    const [x1, x2] = [hi - phi * (hi - lo), lo + phi * (hi - lo)];
    if (dual(x1) < dual(x2)) hi = x2;
    else lo = x1;
  }
  return Math.min(values[best]!, dual((lo + hi) / 2), n);
}

/**
 * The most any level-α test can save, as a share of the n cases, averaged over candidates' laws: every candidate
 * counts with its own law's bound, a better one outside the null (0 < E[D] < margin against the incumbent's
 * scores) included; a law in the null counts α.
 */
export function meanSavingBound(laws: readonly DifferenceLaw[], margin: number, alpha: number, n: number, wave: number): number {
  const shares = laws.map((law) => savingBound(law, margin, alpha, n, wave) / n);
  return shares.reduce((a, b) => a + b, 0) / Math.max(1, shares.length);
}
