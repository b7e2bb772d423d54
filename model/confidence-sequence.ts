/**
 * An anytime-valid confidence sequence for the mean of bounded observations: the predictable plug-in
 * empirical-Bernstein (PrPl-EB) confidence sequence of Waudby-Smith & Ramdas, "Estimating means of bounded
 * random variables by betting", JRSS-B 2023 (arXiv:2010.09686), Theorem 2.
 *
 * For X₁, X₂, … in [0, 1] with conditional mean μ (i.i.d. is enough), and α in (0, 1):
 *
 *   μ̂ₜ  = (½ + Σᵢ≤ₜ Xᵢ) / (t + 1)                     (running mean, shrunk towards ½)
 *   σ̂²ₜ = (¼ + Σᵢ≤ₜ (Xᵢ − μ̂ᵢ)²) / (t + 1)
 *   λₜ   = min(√(2 log(2/α) / (σ̂²ₜ₋₁ · t · log(1 + t))), c)   (predictable: uses data before t; c = ½)
 *   vₜ   = 4 (Xₜ − μ̂ₜ₋₁)²,    ψ(λ) = (−log(1 − λ) − λ) / 4
 *   Cₜ   = Σλᵢ Xᵢ / Σλᵢ  ±  (log(2/α) + Σ vᵢ ψ(λᵢ)) / Σλᵢ
 *
 * Each side is where a nonnegative supermartingale, Πᵢ exp(±λᵢ(Xᵢ − m) − vᵢψ(λᵢ)), reaches 2/α, so by Ville's
 * inequality P(∃t: μ ∉ Cₜ) ≤ α: the interval holds at every t at once, and stopping whenever the data say so
 * (optional stopping) keeps the guarantee. The running intersection of the Cₜ is also a confidence sequence;
 * `boundsAt` returns it.
 *
 * A paired difference D = B − A of two scores in [0, 1] lies in [−1, 1]; `differenceSequence` maps it to
 * (D + 1)/2 in [0, 1] and back. Pure arithmetic, no I/O (workflow code uses it).
 */
import { ConfigError } from './errors';

export interface CsPoint {
  /** Observations so far. */
  t: number;
  /** The plain mean of the observations (what a full evaluation's mean would be on them). */
  mean: number;
  /** The λ-weighted centre of the interval. */
  centre: number;
  /** The running intersection of the intervals up to t, clipped to the observations' range. */
  lower: number;
  upper: number;
}

export interface CsOptions {
  /** 1 − confidence, e.g. 0.05 for 95%. */
  alpha: number;
  /** The cap on λ (the paper suggests ½ or ¾). */
  lambdaCap?: number;
}

const psi = (lambda: number): number => (-Math.log(1 - lambda) - lambda) / 4;

/** The PrPl-EB sequence fed one observation at a time (O(1) each): the race keeps one per pair of candidates. */
export class BettingCs {
  private readonly logTerm: number;
  private readonly cap: number;
  private t = 0;
  private sumX = 0;
  private sumSq = 0; // Σ (Xᵢ − μ̂ᵢ)²
  private muPrev = 0.5; // μ̂₀
  private varPrev = 0.25; // σ̂²₀
  private sumL = 0;
  private sumLX = 0;
  private sumVPsi = 0;
  private lower = 0;
  private upper = 1;

  constructor(opts: CsOptions) {
    const { alpha } = opts;
    if (!(alpha > 0 && alpha < 1)) throw new ConfigError(`alpha: expected a number in (0, 1), got ${alpha}`);
    this.cap = opts.lambdaCap ?? 0.5;
    this.logTerm = Math.log(2 / alpha);
  }

  /** Adds one observation (clipped to [0, 1]) and returns the point after it. */
  push(raw: number): CsPoint {
    const t = ++this.t;
    const x = Math.min(1, Math.max(0, raw));
    const lambda = Math.min(Math.sqrt((2 * this.logTerm) / (this.varPrev * t * Math.log(1 + t))), this.cap);
    this.sumL += lambda;
    this.sumLX += lambda * x;
    this.sumVPsi += 4 * (x - this.muPrev) ** 2 * psi(lambda);
    this.sumX += x;
    const mu = (0.5 + this.sumX) / (t + 1);
    this.sumSq += (x - mu) ** 2;
    this.muPrev = mu;
    this.varPrev = (0.25 + this.sumSq) / (t + 1);
    return this.current();
  }

  /** The point after the observations so far (before any: the whole of [0, 1]). */
  current(): CsPoint {
    if (this.t === 0) return { t: 0, mean: 0.5, centre: 0.5, lower: 0, upper: 1 };
    const centre = this.sumLX / this.sumL;
    const half = (this.logTerm + this.sumVPsi) / this.sumL;
    this.lower = Math.max(this.lower, centre - half);
    this.upper = Math.min(this.upper, centre + half);
    return { t: this.t, mean: this.sumX / this.t, centre, lower: this.lower, upper: this.upper };
  }
}

/** The PrPl-EB sequence for observations in [0, 1]: one point per observation, in order. */
export function bettingSequence(xs: readonly number[], opts: CsOptions): CsPoint[] {
  const cs = new BettingCs(opts);
  return xs.map((x) => cs.push(x));
}

/** A point of the sequence of (D + 1)/2 mapped back to the difference D in [−1, 1]. */
export function asDifference(p: CsPoint): CsPoint {
  const back = (y: number) => 2 * y - 1;
  return { t: p.t, mean: back(p.mean), centre: back(p.centre), lower: back(p.lower), upper: back(p.upper) };
}

/** A paired difference b − a of two scores in [0, 1], mapped to [0, 1]. */
export const shiftedDifference = (a: number, b: number): number => {
  const clip = (s: number) => Math.min(1, Math.max(0, s));
  return (clip(b) - clip(a) + 1) / 2;
};

/**
 * The confidence sequence of the mean paired difference b − a, for per-task scores in [0, 1] (so the
 * difference is in [−1, 1]); one point per pair, in the order given.
 */
export function differenceSequence(pairs: readonly { a: number; b: number }[], opts: CsOptions): CsPoint[] {
  return bettingSequence(
    pairs.map((p) => shiftedDifference(p.a, p.b)),
    opts,
  ).map(asDifference);
}

/**
 * The log of the upper-side wealth Σ λᵢ(Xᵢ − m) − vᵢψ(λᵢ) at m, computed directly from the supermartingale's
 * definition (not from the closed form above): the interval's lower end is where it reaches log(2/α). Tests
 * use it to check the closed form; exported for them.
 */
export function logWealth(xs: readonly number[], m: number, opts: CsOptions, side: 1 | -1 = 1): number {
  const cap = opts.lambdaCap ?? 0.5;
  const logTerm = Math.log(2 / opts.alpha);
  let w = 0;
  let muPrev = 0.5;
  let varPrev = 0.25;
  let sumX = 0;
  let sumSq = 0;
  xs.forEach((x, i) => {
    const t = i + 1;
    const lambda = Math.min(Math.sqrt((2 * logTerm) / (varPrev * t * Math.log(1 + t))), cap);
    w += side * lambda * (x - m) - 4 * (x - muPrev) ** 2 * psi(lambda);
    sumX += x;
    const mu = (0.5 + sumX) / (t + 1);
    sumSq += (x - mu) ** 2;
    muPrev = mu;
    varPrev = (0.25 + sumSq) / (t + 1);
  });
  return w;
}
