/**
 * Early stop against the incumbent (pure: the sidecar and bench/early-stop.ts use it). An evaluation of a candidate
 * on n cases runs them in a seeded random order, paired with the incumbent's scores on the same cases, and stops
 * once an anytime-valid confidence sequence of the mean paired difference D = candidate − incumbent says the
 * candidate cannot beat the incumbent by `margin`: its upper end is below the margin.
 *
 * Two targets, two sequences (model/race/confidence-sequence.ts):
 *   - 'cases' (the default): the mean of D over the n cases asked for, with the candidate's outcome on a case fixed
 *     once run — what the full evaluation would have compared. The without-replacement betting sequence
 *     (`WeightedWorCs` with uniform draws: Waudby-Smith & Ramdas, NeurIPS 2020), one-sided at level α (its upper
 *     bettor alone, so the two-sided sequence at 2α). Guarantee: P(stopped although the full evaluation on these
 *     cases would have beaten the incumbent's score on them by ≥ margin) ≤ α.
 *   - 'distribution': the mean of D over the case distribution (the n cases, in random order, as independent
 *     draws), the race's hedged-capital sequence (`HedgedCs`, JRSS-B 2023 Theorem 3), one-sided at α. Guarantee:
 *     P(stopped although the candidate's true mean beats the incumbent's scores' by ≥ margin) ≤ α. Looser.
 * Both hold at every case at once, so deciding after each case keeps them. No stop before `minCases` cases ran
 * (an aggregate-only partition's `min_aggregate_cases`: the aggregate it reports covers at least that many).
 */
import { type CsPoint, HedgedCs, shiftedDifference, WeightedWorCs, asDifference } from './confidence-sequence';
import { ConfigError } from '../errors';
import { raceOrder } from './types';

export type EarlyStopTarget = 'cases' | 'distribution';

export interface EarlyStopRule {
  /** 1 − α, e.g. 0.95. */
  confidence: number;
  /** Stop once the candidate surely cannot beat the incumbent by this much (a difference of mean scores). */
  margin: number;
  /** No stop before this many cases ran. */
  minCases: number;
  target?: EarlyStopTarget;
}

/** Where and why an evaluation stopped (or that it ran every case). */
export interface EarlyStopVerdict {
  /** Cases run when the decision was taken (null: never stopped). */
  stoppedAt: number | null;
  /** mean(candidate − incumbent) over the cases run, and the sequence's upper end then. */
  meanDiff: number;
  upper: number;
  why: string | null;
}

/** The cases in the evaluation's seeded random order (the same seed, the same order). */
export const earlyStopOrder = (cases: readonly string[], seed: string): string[] => raceOrder(cases, `early-stop:${seed}`);

/** The sequences are tuned for half the cases (`CsOptions.horizon`): tuning moves tightness, never validity. */
const horizonOf = (n: number) => Math.max(10, Math.round(n / 2));

/** An evaluation's early-stop test, fed one case at a time in the seeded order. */
export class EarlyStop {
  private readonly cs: { push(d: number): CsPoint; current(): CsPoint };
  private sum = 0;
  t = 0;
  verdict: EarlyStopVerdict = { stoppedAt: null, meanDiff: 0, upper: 1, why: null };

  constructor(
    readonly nCases: number,
    readonly rule: EarlyStopRule,
  ) {
    const alpha = 1 - rule.confidence;
    if (!(alpha > 0 && alpha < 0.5)) throw new ConfigError(`confidence: expected a number in (0.5, 1), got ${rule.confidence}`);
    const horizon = horizonOf(nCases);
    if ((rule.target ?? 'cases') === 'cases') {
      const wor = new WeightedWorCs({ alpha: 2 * alpha, horizon, population: nCases, range: [-1, 1] });
      const uniform = { rel: 1, minRel: 1, maxRel: 1 };
      this.cs = { push: (d) => wor.push(d, uniform), current: () => wor.current() };
    } else {
      const iid = new HedgedCs({ alpha: 2 * alpha, horizon });
      this.cs = { push: (d) => asDifference(iid.push((d + 1) / 2)), current: () => asDifference(iid.current()) };
    }
  }

  /** The next case: the candidate's and the incumbent's scores on it (clipped to [0, 1]). True once it stops. */
  observe(candidate: number, incumbent: number): boolean {
    if (this.verdict.stoppedAt !== null) return true;
    const d = 2 * shiftedDifference(incumbent, candidate) - 1;
    const p = this.cs.push(d);
    this.sum += d;
    this.t++;
    const meanDiff = this.sum / this.t;
    this.verdict = { stoppedAt: null, meanDiff, upper: p.upper, why: null };
    if (this.t >= this.rule.minCases && p.upper < this.rule.margin && this.t < this.nCases) {
      const conf = `${(100 * this.rule.confidence).toFixed(0)}%`;
      this.verdict = {
        stoppedAt: this.t,
        meanDiff,
        upper: p.upper,
        why: `after ${this.t} of ${this.nCases} case(s): mean(candidate − incumbent) = ${meanDiff.toFixed(3)}, its ${conf} confidence sequence's upper end ${p.upper.toFixed(3)} is below the margin ${this.rule.margin}`,
      };
      return true;
    }
    return false;
  }
}
