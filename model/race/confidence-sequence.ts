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
import { ConfigError } from '../errors';

// Looked up once: in a vm context (Temporal's workflow sandbox, jest) every read of a global such as `Math` goes
// through the context's interceptor, which made the hedged sequence's grid loop 15× slower there than in Node.
const { log1p, min } = Math;

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
  /**
   * The number of observations the sequence is tuned for (e.g. the tasks a race has): λₜ uses n* in place of
   * t · log(1 + t), the paper's fixed-time choice (its Remark on tuning for a target time). The sequence stays
   * anytime-valid (λ is still predictable); it is tightest around n* and looser far before it. Unset: PrPl-EB.
   */
  horizon?: number;
}

/** The bet's settings every sequence takes from its options: log(2/α) (α checked to be in (0, 1)), λ's cap, the horizon. */
function betSettings(opts: CsOptions) {
  const { alpha } = opts;
  if (!(alpha > 0 && alpha < 1)) throw new ConfigError(`alpha: expected a number in (0, 1), got ${alpha}`);
  return { logTerm: Math.log(2 / alpha), cap: opts.lambdaCap ?? 0.5, horizon: opts.horizon };
}
type BetSettings = ReturnType<typeof betSettings>;

/** λₜ before the t-th observation, from the variance estimate of the observations before it, at most `cap`. */
function betSize(t: number, varPrev: number, { logTerm, horizon }: BetSettings, cap: number): number {
  const scale = horizon !== undefined && horizon > 0 ? horizon : t * Math.log(1 + t);
  return Math.min(Math.sqrt((2 * logTerm) / (varPrev * scale)), cap);
}

/** The plug-in estimates μ̂ₜ and σ̂²ₜ of observations in [lo, hi] (shrunk towards the range's middle), fed one at a time. */
class PlugIn {
  t = 0;
  sum = 0;
  private sumSq = 0;
  mean: number;
  variance: number;

  constructor(
    private readonly lo = 0,
    private readonly hi = 1,
  ) {
    this.mean = (lo + hi) / 2;
    this.variance = (hi - lo) ** 2 / 4;
  }

  push(x: number): void {
    const t = ++this.t;
    this.sum += x;
    this.mean = ((this.lo + this.hi) / 2 + this.sum) / (t + 1);
    this.sumSq += (x - this.mean) ** 2;
    this.variance = ((this.hi - this.lo) ** 2 / 4 + this.sumSq) / (t + 1);
  }
}

/** A confidence sequence fed one observation at a time. */
export interface SequentialCs {
  push(x: number): CsPoint;
  current(): CsPoint;
}

/** Which sequence: PrPl-EB (closed form, O(1) per observation) or hedged capital (a grid, tighter). */
export type CsKind = 'eb' | 'hedged';

export const makeCs = (kind: CsKind, opts: CsOptions): SequentialCs => (kind === 'hedged' ? new HedgedCs(opts) : new BettingCs(opts));

const psi = (lambda: number): number => (-Math.log(1 - lambda) - lambda) / 4;

/** The PrPl-EB sequence fed one observation at a time (O(1) each): the race keeps one per pair of candidates. */
class BettingCs implements SequentialCs {
  private readonly settings: BetSettings;
  private readonly est = new PlugIn();
  private sumL = 0;
  private sumLX = 0;
  private sumVPsi = 0;
  private lower = 0;
  private upper = 1;

  constructor(opts: CsOptions) {
    this.settings = betSettings(opts);
  }

  /** Adds one observation (clipped to [0, 1]) and returns the point after it. */
  push(raw: number): CsPoint {
    const x = Math.min(1, Math.max(0, raw));
    const lambda = betSize(this.est.t + 1, this.est.variance, this.settings, this.settings.cap);
    this.sumL += lambda;
    this.sumLX += lambda * x;
    this.sumVPsi += 4 * (x - this.est.mean) ** 2 * psi(lambda);
    this.est.push(x);
    return this.current();
  }

  /** The point after the observations so far (before any: the whole of [0, 1]). */
  current(): CsPoint {
    const { t, sum } = this.est;
    if (t === 0) return { t: 0, mean: 0.5, centre: 0.5, lower: 0, upper: 1 };
    const centre = this.sumLX / this.sumL;
    const half = (this.settings.logTerm + this.sumVPsi) / this.sumL;
    this.lower = Math.max(this.lower, centre - half);
    this.upper = Math.min(this.upper, centre + half);
    return { t, mean: sum / t, centre, lower: this.lower, upper: this.upper };
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
  const bet = betSettings(opts);
  const est = new PlugIn();
  let w = 0;
  for (const x of xs) {
    const lambda = betSize(est.t + 1, est.variance, bet, bet.cap);
    w += side * lambda * (x - m) - 4 * (x - est.mean) ** 2 * psi(lambda);
    est.push(x);
  }
  return w;
}

/**
 * The hedged-capital confidence sequence of Waudby-Smith & Ramdas (JRSS-B 2023, Theorem 3), on a grid of
 * candidate means: for each m, two bettors' wealth
 *
 *   K⁺ₜ(m) = Πᵢ≤ₜ (1 + λ⁺ᵢ(m)(Xᵢ − m)),  λ⁺ᵢ(m) = min(λ̃ᵢ, c/m)
 *   K⁻ₜ(m) = Πᵢ≤ₜ (1 − λ⁻ᵢ(m)(Xᵢ − m)),  λ⁻ᵢ(m) = min(λ̃ᵢ, c/(1 − m))
 *
 * with λ̃ᵢ the predictable plug-in bet above (PrPl-EB's λ, uncapped) and c = ½. Each is a nonnegative martingale
 * when m is the true mean, so by Ville's inequality the set {m : K⁺ₜ(m) < 2/α and K⁻ₜ(m) < 2/α} holds the mean
 * at every t at once with probability ≥ 1 − α (each side errs with at most α/2). It bets the observations
 * themselves rather than a Bernstein bound on them, so for few-valued data (a paired difference of pass/fail
 * scores takes three values) it is markedly tighter than PrPl-EB — at the price of O(grid) work per observation.
 *
 * K⁺ decreases in m and K⁻ increases, so the rejected points form the two ends of the grid; the interval
 * reported runs from the highest rejected grid point below the mean to the lowest above it (conservative by at
 * most one grid step), intersected over time.
 */
export class HedgedCs implements SequentialCs {
  private readonly settings: BetSettings;
  private readonly est = new PlugIn();
  private readonly grid: Float64Array;
  private readonly logUp: Float64Array;
  private readonly logDown: Float64Array;
  private lower = 0;
  private upper = 1;

  constructor(
    opts: CsOptions,
    readonly gridSize = 400,
  ) {
    this.settings = betSettings(opts);
    this.grid = Float64Array.from({ length: gridSize - 1 }, (_, i) => (i + 1) / gridSize);
    this.logUp = new Float64Array(this.grid.length);
    this.logDown = new Float64Array(this.grid.length);
  }

  /** Adds one observation (clipped to [0, 1]) and returns the point after it. */
  push(raw: number): CsPoint {
    const x = Math.min(1, Math.max(0, raw));
    const bet = betSize(this.est.t + 1, this.est.variance, this.settings, Infinity);
    const { grid, logUp, logDown } = this;
    const { cap } = this.settings;
    for (let k = 0; k < grid.length; k++) {
      const m = grid[k]!;
      logUp[k] = logUp[k]! + log1p(min(bet, cap / m) * (x - m));
      logDown[k] = logDown[k]! + log1p(-min(bet, cap / (1 - m)) * (x - m));
    }
    this.est.push(x);
    return this.current();
  }

  /** The point after the observations so far (before any: the whole of [0, 1]). */
  current(): CsPoint {
    const { t, sum } = this.est;
    if (t === 0) return { t: 0, mean: 0.5, centre: 0.5, lower: 0, upper: 1 };
    let lower = 0;
    let upper = 1;
    const { grid, logUp, logDown } = this;
    const { logTerm } = this.settings;
    for (let k = 0; k < grid.length; k++) {
      if (logUp[k]! >= logTerm) lower = grid[k]!;
      if (logDown[k]! >= logTerm && upper === 1) upper = grid[k]!;
    }
    this.lower = Math.max(this.lower, lower);
    this.upper = Math.min(this.upper, upper);
    const mean = sum / t;
    return { t, mean, centre: mean, lower: this.lower, upper: this.upper };
  }
}

/** One draw of a weighted sampling without replacement, as the sequence needs it (all known before the draw). */
export interface WeightedDraw {
  /** (units left) · qₜ(drawn unit): how likely the drawn unit was relative to a uniform draw (1 when uniform). */
  rel: number;
  /** The least and the greatest (units left) · qₜ(u) over the units left at this draw. */
  minRel: number;
  maxRel: number;
}

export interface WeightedCsOptions extends CsOptions {
  /** N: the units of the finite population whose mean is estimated (a race's tasks). */
  population: number;
  /** The range of one unit's value, e.g. [−1, 1] for a paired difference of scores in [0, 1]. */
  range: [number, number];
}

/**
 * An anytime-valid confidence sequence for the mean μ = (1/N) Σᵤ xᵤ of a finite population of N values in
 * [lo, hi], sampled without replacement with predictable, possibly unequal probabilities: a betting confidence
 * sequence for sampling without replacement (Waudby-Smith & Ramdas, "Confidence sequences for sampling without
 * replacement", NeurIPS 2020, §3: the capital process bets on the mean of the units left), with importance-weighted
 * observations as in the off-policy betting sequences of Waudby-Smith, Wu, Ramdas, Karampatziakis & Mineiro,
 * "Anytime-valid off-policy inference for contextual bandits" (2022, §3), and hedged capital (Waudby-Smith & Ramdas,
 * JRSS-B 2023, Theorem 3) as in `HedgedCs`.
 *
 * At draw t (1-based) Lₜ = N − t + 1 units are left, Sₜ₋₁ is the sum of the values drawn so far, and unit Iₜ is
 * drawn with probability qₜ(Iₜ) > 0 (qₜ fixed before the draw, every unit left possible):
 *
 *   mₜ(μ) = (Nμ − Sₜ₋₁) / Lₜ                          (the mean of the units left, were μ the population mean)
 *   Zₜ    = x(Iₜ) / (Lₜ qₜ(Iₜ))                        (E[Zₜ | past] = mₜ(μ) at the true μ: Horvitz–Thompson)
 *   K⁺ₜ(μ) = Πᵢ≤ₜ (1 + λ⁺ᵢ(Zᵢ − mᵢ(μ))),  λ⁺ᵢ = min(λ̃ᵢ, c / (mᵢ − Zmin,ᵢ))
 *   K⁻ₜ(μ) = Πᵢ≤ₜ (1 − λ⁻ᵢ(Zᵢ − mᵢ(μ))),  λ⁻ᵢ = min(λ̃ᵢ, c / (Zmax,ᵢ − mᵢ))
 *
 * where [Zmin,ᵢ, Zmax,ᵢ] bounds Zᵢ from the draw's least and greatest relative probability (so every factor is
 * ≥ 1 − c > 0), λ̃ᵢ is the predictable plug-in bet of `betSize` on the Z scale, and c = ½. At the true μ both are
 * nonnegative martingales, so by Ville's inequality P(∃t: K⁺ₜ(μ) ≥ 2/α or K⁻ₜ(μ) ≥ 2/α) ≤ α: the set of grid points
 * μ where neither has reached 2/α, and whose mₜ(μ) lies in [lo, hi] (the units left must be able to have that mean),
 * holds the population mean at every t at once. Each factor of K⁺ falls as μ grows and each of K⁻ rises, so the
 * ruled-out points are the grid's two ends; the interval reported is the hull of the points left, widened by a
 * grid step, intersected over time (at t = N it is the population mean, up to a grid step). With uniform probabilities
 * (every rel = 1) it is the without-replacement hedged sequence.
 *
 * The guarantee is over the sampling only: it treats each unit's value as fixed (a task's score, had it been run),
 * whatever the probabilities were computed from.
 */
export class WeightedWorCs {
  private readonly settings: BetSettings;
  private readonly n: number;
  private readonly lo: number;
  private readonly hi: number;
  /** The plug-in estimates of the Z scale's observations. */
  private readonly est: PlugIn;
  private readonly grid: Float64Array;
  private readonly logUp: Float64Array;
  private readonly logDown: Float64Array;
  private readonly out: Uint8Array;
  private sumX = 0;
  private sumEst = 0;
  private lower: number;
  private upper: number;
  private readonly gridSize = 400;

  constructor(opts: WeightedCsOptions) {
    const { population, range } = opts;
    this.settings = betSettings(opts);
    if (!(Number.isInteger(population) && population >= 1))
      throw new ConfigError(`population: expected a whole number ≥ 1, got ${population}`);
    [this.lo, this.hi] = range;
    this.n = population;
    this.est = new PlugIn(this.lo, this.hi);
    const span = this.hi - this.lo;
    this.grid = Float64Array.from({ length: this.gridSize - 1 }, (_, i) => this.lo + (span * (i + 1)) / this.gridSize);
    this.logUp = new Float64Array(this.grid.length);
    this.logDown = new Float64Array(this.grid.length);
    this.out = new Uint8Array(this.grid.length);
    this.lower = this.lo;
    this.upper = this.hi;
  }

  /** Adds the drawn unit's value (clipped to the range) with its draw's probabilities; returns the point after it. */
  push(raw: number, draw: WeightedDraw): CsPoint {
    if (this.est.t >= this.n) throw new ConfigError(`population: more than ${this.n} draws`);
    const left = this.n - this.est.t;
    const x = min(this.hi, Math.max(this.lo, raw));
    const z = x / draw.rel;
    const ends = [this.lo / draw.minRel, this.lo / draw.maxRel, this.hi / draw.minRel, this.hi / draw.maxRel];
    const zMin = min(...ends);
    const zMax = Math.max(...ends);
    const bet = betSize(this.est.t + 1, this.est.variance, this.settings, Infinity);
    this.bet(z, left, bet, zMin, zMax);
    this.sumEst += (this.sumX + left * z) / this.n;
    this.sumX += x;
    this.est.push(z);
    return this.current();
  }

  private bet(z: number, left: number, bet: number, zMin: number, zMax: number): void {
    const { grid, logUp, logDown, out, n, lo, hi } = this;
    const { cap } = this.settings;
    for (let k = 0; k < grid.length; k++) {
      if (out[k]) continue;
      // (A rounding error of the grid's arithmetic must not rule out a mean the units left can have.)
      const raw = (n * grid[k]! - this.sumX) / left;
      if (raw < lo - 1e-9 || raw > hi + 1e-9) {
        out[k] = 1;
        continue;
      }
      const m = min(hi, Math.max(lo, raw));
      logUp[k] = logUp[k]! + log1p(min(bet, cap / (m - zMin)) * (z - m));
      logDown[k] = logDown[k]! + log1p(-min(bet, cap / (zMax - m)) * (z - m));
    }
  }

  /**
   * The point after the draws so far: `mean` is the average of the per-draw unbiased estimates (Sₜ₋₁ + LₜZₜ)/N of
   * the population mean (not the plain mean of the values drawn, which unequal probabilities bias).
   */
  current(): CsPoint {
    const { t } = this.est;
    if (t === 0) {
      const mid = (this.lo + this.hi) / 2;
      return { t: 0, mean: mid, centre: mid, lower: this.lo, upper: this.hi };
    }
    let first = -1;
    let last = -1;
    const { grid, logUp, logDown, out } = this;
    const { logTerm } = this.settings;
    for (let k = 0; k < grid.length; k++) {
      if (out[k] || logUp[k]! >= logTerm || logDown[k]! >= logTerm) continue;
      if (first < 0) first = k;
      last = k;
    }
    const step = (this.hi - this.lo) / this.gridSize;
    if (first >= 0) {
      this.lower = Math.max(this.lower, grid[first]! - step);
      this.upper = min(this.upper, grid[last]! + step);
    }
    const mean = this.sumEst / t;
    return { t, mean, centre: mean, lower: this.lower, upper: this.upper };
  }
}
