/**
 * The oracle sequential test the benches measure the real rules against (pure; bench/early-stop.ts, bench/race.ts).
 *
 * A paired difference D = candidate − reference on a case drawn at random takes the values +1, 0, −1 (scores 0 or
 * 1) with probabilities p₊, p₀, p₋. The rules stop once they can say "E[D] < m" (the candidate cannot beat the
 * reference by the margin m); their null is the composite H₀: E[D] ≥ m. The oracle knows the true alternative Q
 * and bets the log-optimal fraction against H₀:
 *
 *   Wₜ = Πᵢ≤ₜ (1 − λ*(Dᵢ − m)),   λ* = argmax_λ E_Q[log(1 − λ(D − m))]   (λ* = 0 when E_Q[D] ≥ m)
 *
 * Every factor has expectation ≤ 1 under any distribution in H₀, so Wₜ is a nonnegative supermartingale under
 * H₀ and stopping once Wₜ ≥ 1/α errs with probability ≤ α at any stopping time (Ville's inequality). Wₜ is also
 * exactly Wald's likelihood ratio of Q against p*(d) = Q(d) / (1 − λ*(d − m)), the distribution of H₀ closest to
 * Q in Kullback–Leibler divergence (its reverse information projection: E_{p*}[D] = m, Σ p* = 1 by λ*'s
 * first-order condition). So it is Wald's SPRT of the simple null p* against the true alternative, with the
 * growth rate E_Q[log Wₜ]/t = KL(Q‖p*), the largest any e-process valid for H₀ can have under Q (Grünwald, de
 * Heide & Koolen, "Safe testing", JRSS-B 2024; Larsson, Ramdas & Ruf, "The numeraire e-variable", 2024). What no
 * real rule has is Q itself: the oracle's saving bounds what a valid anytime rule can save on the same draws
 * (up to the slack of Ville's threshold, which the benches measure at the boundary).
 */

/** The law of a difference of two 0/1 scores: P(D = +1) and P(D = −1). */
export interface DifferenceLaw {
  plus: number;
  minus: number;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * The law of D = X − Y on a case drawn uniformly, X and Y independent 0/1 outcomes with P(X = 1) = x[i] and
 * P(Y = 1) = y[i] on case i (a fixed score is a probability of 0 or 1).
 */
export function differenceLaw(x: readonly number[], y: readonly number[]): DifferenceLaw {
  return {
    plus: mean(x.map((xi, i) => xi * (1 - y[i]!))),
    minus: mean(x.map((xi, i) => (1 - xi) * y[i]!)),
  };
}

/** E_Q[(D − m) / (1 − λ(D − m))]'s negative: the derivative of the expected log-wealth in λ (falls as λ grows). */
function logWealthSlope(law: DifferenceLaw, margin: number, lambda: number): number {
  const zero = 1 - law.plus - law.minus;
  const term = (p: number, d: number) => (p > 0 ? (-p * (d - margin)) / (1 - lambda * (d - margin)) : 0);
  return term(law.plus, 1) + term(zero, 0) + term(law.minus, -1);
}

/** λ*: the log-optimal bet against E[D] ≥ margin under the law (0 when the law is in the null). */
export function logOptimalBet(law: DifferenceLaw, margin: number): number {
  if (logWealthSlope(law, margin, 0) <= 0) return 0;
  // The wealth factor at D = +1 is 1 − λ(1 − m): λ stays below 1/(1 − m), where that factor would be 0.
  let lo = 0;
  let hi = 1 / (1 - margin);
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (logWealthSlope(law, margin, mid) > 0) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** p*: the null's law closest to Q (E[D] = margin), under which the benches check the oracle's type-I error. */
export function closestNullLaw(law: DifferenceLaw, margin: number): DifferenceLaw {
  const lambda = logOptimalBet(law, margin);
  const minus = law.minus / (1 + lambda * (1 + margin));
  // A law with no +1 bets the most (λ(1 − m) = 1): its null's +1 mass is what the tilt leaves, not 0/0.
  if (law.plus === 0) return { plus: 1 - minus - (1 - law.minus) / (1 + lambda * margin), minus };
  return { plus: law.plus / (1 - lambda * (1 - margin)), minus };
}

/** One oracle test: fed differences one at a time; true once its wealth reached the threshold (default 1/α). */
export class OracleSprt {
  private logWealth = 0;
  private readonly lambda: number;
  private readonly logThreshold: number;
  t = 0;
  stoppedAt: number | null = null;

  constructor(
    law: DifferenceLaw,
    readonly margin: number,
    alpha: number,
    threshold = 1 / alpha,
  ) {
    this.lambda = logOptimalBet(law, margin);
    this.logThreshold = Math.log(threshold);
  }

  observe(d: number): boolean {
    if (this.stoppedAt !== null) return true;
    this.t++;
    this.logWealth += Math.log(1 - this.lambda * (d - this.margin));
    if (this.logWealth >= this.logThreshold) this.stoppedAt = this.t;
    return this.stoppedAt !== null;
  }
}

/** A difference drawn from the law with one uniform draw u. */
export const drawDifference = (law: DifferenceLaw, u: number): number => (u < law.plus ? 1 : u < law.plus + law.minus ? -1 : 0);
