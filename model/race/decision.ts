/**
 * The race's decision rule (pure: the race workflow and bench/race.ts both call it).
 *
 * Every live candidate has run the same first t tasks of one shared random order. The leader is the live
 * candidate with the highest mean over them (ties: the earlier-listed). A live candidate j is eliminated when
 * the confidence sequence of its paired per-task difference to the leader, mean(j − leader), lies entirely
 * below 0. The race stops when one candidate is left, or when every other live candidate's difference to the
 * leader is below `margin` (its sequence's upper end < margin), or when no task is left.
 *
 * Multiplicity (a union bound): with K candidates at the start and confidence 1 − α, every pair's sequence is
 * two-sided at level 2α/(K − 1), so each of its sides errs with probability at most α/(K − 1). Whichever
 * candidate is truly best, eliminating it (or stopping on the margin when it is ≥ margin better than the
 * winner) needs one of its K − 1 one-sided bounds to err at some point; so, at every stopping time at once,
 * P(the best is eliminated, or the winner is more than `margin` worse than it) ≤ α.
 *
 * With a weighted order (`RaceRules.sampling`, model/race/sampling.ts) the tasks are drawn with unequal, known
 * probabilities; each pair's sequence is then the importance-weighted without-replacement sequence
 * (`WeightedWorCs`) of the mean difference over all the race's tasks, and the leader is the candidate with the
 * highest unbiased estimate of its mean over all the tasks. The same union bound holds.
 */
import {
  asDifference,
  type CsKind,
  type CsPoint,
  makeCs,
  shiftedDifference,
  type WeightedDraw,
  WeightedWorCs,
} from './confidence-sequence';

export interface RaceRules {
  /** 1 − confidence (0.05 for 95%). */
  alpha: number;
  /** Candidates at the start (the union bound's K). */
  nCandidates: number;
  /** A practical margin: stop once no live candidate can be this much better than the leader. 0: never. */
  margin: number;
  /** The tasks the race can run: each pair's sequence is tuned for it (`CsOptions.horizon`). Unset: untuned. */
  horizon?: number;
  /** The pairs' confidence sequence (`CsKind`); unset: PrPl-EB, as races recorded before hedged capital. */
  cs?: CsKind;
  /** The tasks were drawn with these probabilities (one per task of the order): weighted sequences. Unset: uniform. */
  sampling?: { draws: readonly WeightedDraw[] };
}

/** A pair's sequence of mean(j − i) on the difference's own scale [−1, 1]. */
interface PairSequence {
  /** The t-th shared task (0-based): candidate i's score a and j's score b on it. */
  push(a: number, b: number, t: number): void;
  current(): CsPoint;
}

/** The uniform order's pair sequence: the sequence of (D + 1)/2, as races have always kept it. */
function uniformPair(kind: CsKind, alpha: number, horizon: number | undefined): PairSequence {
  const cs = makeCs(kind, { alpha, horizon });
  return { push: (a, b) => void cs.push(shiftedDifference(a, b)), current: () => asDifference(cs.current()) };
}

/** The weighted order's pair sequence: importance-weighted, without replacement, over all the race's tasks. */
function weightedPair(draws: readonly WeightedDraw[], alpha: number, horizon: number | undefined): PairSequence {
  const cs = new WeightedWorCs({ alpha, horizon, population: draws.length, range: [-1, 1] });
  const clip = (s: number) => Math.min(1, Math.max(0, s));
  return { push: (a, b, t) => void cs.push(clip(b) - clip(a), draws[t]!), current: () => cs.current() };
}

/**
 * The number of shared tasks the pairs' bets are tuned for: a third of the race's tasks (at least 10). On the
 * race benchmark's 200 tasks any target from 50 to 100 saved about the same; eliminations happen well before the
 * last task, so tuning for the end (200) or for every time at once (PrPl's t·log(1 + t)) saved less.
 */
export const raceHorizon = (tasks: number): number => Math.max(10, Math.round(tasks / 3));

/** The two-sided level each pair's sequence is computed at (see the file's docstring). */
export function pairAlpha(rules: Pick<RaceRules, 'alpha' | 'nCandidates'>): number {
  return rules.nCandidates <= 2 ? Math.min(2 * rules.alpha, 0.999) : (2 * rules.alpha) / (rules.nCandidates - 1);
}

export interface PairBound {
  /** Tasks the pair shares. */
  t: number;
  /** mean(candidate − leader) and its confidence sequence's current interval. */
  meanDiff: number;
  lower: number;
  upper: number;
}

export interface RaceDecision {
  /** Shared tasks at this decision point. */
  t: number;
  leader: number;
  /** Per candidate index: its difference to the leader (null for the leader itself and the eliminated). */
  bounds: (PairBound | null)[];
  eliminated: number[];
  /** Set when the race should stop after this decision. */
  stop: 'one-left' | 'within-margin' | null;
}

/**
 * The race's statistics, fed one shared task at a time: a confidence sequence per pair of live candidates
 * (O(K²) per task), so a decision costs nothing more however many tasks have run.
 */
export class PairedRace {
  private readonly sums: number[];
  /** Weighted order: each candidate's running sum of unbiased per-draw estimates of its mean over all tasks. */
  private readonly estimates: number[];
  /** cs[i][j] (i < j): the sequence of mean(j − i). */
  private readonly cs: (PairSequence | null)[][];
  readonly live: boolean[];
  t = 0;

  constructor(readonly rules: RaceRules) {
    const k = rules.nCandidates;
    const alpha = pairAlpha(rules);
    this.sums = Array<number>(k).fill(0);
    this.estimates = Array<number>(k).fill(0);
    this.live = Array<boolean>(k).fill(true);
    const draws = rules.sampling?.draws;
    const pair = () => (draws ? weightedPair(draws, alpha, rules.horizon) : uniformPair(rules.cs ?? 'eb', alpha, rules.horizon));
    this.cs = Array.from({ length: k }, (_, i) => Array.from({ length: k }, (_, j) => (j > i ? pair() : null)));
  }

  /** The unbiased estimate (Sₜ₋₁ + LₜZₜ)/N of a candidate's mean over all tasks from the t-th draw (weighted order). */
  private estimateFrom(sumBefore: number, score: number, draws: readonly WeightedDraw[]): number {
    const left = draws.length - this.t;
    return (sumBefore + (left * score) / draws[this.t]!.rel) / draws.length;
  }

  /** The next task in the shared order: each live candidate's score on it (the eliminated ones' are ignored). */
  observe(scores: readonly (number | null)[]): void {
    const alive = this.alive();
    const draws = this.rules.sampling?.draws;
    if (draws) for (const i of alive) this.estimates[i]! += this.estimateFrom(this.sums[i]!, scores[i] ?? 0, draws);
    for (const i of alive) this.sums[i]! += scores[i] ?? 0;
    for (const i of alive) for (const j of alive) if (j > i) this.cs[i]![j]!.push(scores[i] ?? 0, scores[j] ?? 0, this.t);
    this.t++;
  }

  alive(): number[] {
    return this.live.flatMap((l, i) => (l ? [i] : []));
  }

  /** mean(j − i) over their shared tasks, with its confidence sequence's interval now. */
  bound(i: number, j: number): PairBound {
    const p = i < j ? this.cs[i]![j]!.current() : this.cs[j]![i]!.current();
    return i < j
      ? { t: p.t, meanDiff: p.mean, lower: p.lower, upper: p.upper }
      : { t: p.t, meanDiff: -p.mean, lower: -p.upper, upper: -p.lower };
  }

  /** The running mean of each candidate over the tasks it ran. */
  meanOf(i: number, tasksRun: number): number {
    return tasksRun ? this.sums[i]! / tasksRun : 0;
  }

  /** Each candidate's estimate of its mean over all the tasks: the plain mean (uniform order) or the reweighted one. */
  estimatedMeans(): number[] {
    const n = Math.max(1, this.t);
    return this.rules.sampling ? this.estimates.map((e) => e / n) : this.sums.map((s) => s / n);
  }

  /** The decision now; the eliminated candidates are marked so. */
  decide(): RaceDecision {
    const alive = this.alive();
    const means = this.estimatedMeans();
    const leader = alive.reduce((best, i) => (means[i]! > means[best]! ? i : best), alive[0]!);
    const bounds: (PairBound | null)[] = this.live.map(() => null);
    const eliminated: number[] = [];
    for (const j of alive) {
      if (j === leader || this.t === 0) continue;
      bounds[j] = this.bound(leader, j);
      if (bounds[j].upper < 0) eliminated.push(j);
    }
    for (const j of eliminated) this.live[j] = false;
    const left = this.alive();
    let stop: RaceDecision['stop'] = null;
    if (left.length <= 1) stop = 'one-left';
    else if (this.rules.margin > 0 && this.t > 0 && left.every((j) => j === leader || bounds[j]!.upper < this.rules.margin))
      stop = 'within-margin';
    return { t: this.t, leader, bounds, eliminated, stop };
  }
}

/**
 * The decision after the first t shared tasks, from scratch. `scores[i]` holds candidate i's scores in the
 * shared order (at least t of them for a live one); `live[i]` whether it is still racing.
 */
export function decide(scores: readonly (readonly number[])[], live: readonly boolean[], t: number, rules: RaceRules): RaceDecision {
  const race = new PairedRace(rules);
  live.forEach((l, i) => (race.live[i] = l));
  for (let k = 0; k < t; k++) race.observe(scores.map((s) => s[k] ?? 0));
  return race.decide();
}
