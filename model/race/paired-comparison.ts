/**
 * Is candidate B better than A? A paired comparison over the tasks both evaluated: per-task deltas, the mean
 * delta with a paired bootstrap 95% interval (fixed seed: the same inputs give the same interval), an exact
 * McNemar test on pass/fail, the tasks that flipped each way, and a verdict that says when the sample is too
 * small — with about how many more tasks would resolve a delta of this size.
 */
import { jStat } from 'jstat';
import seedrandom from 'seedrandom';
import type { z } from 'zod';
import type { CompareJson } from '../cli-json';

/** A paired comparison of two evaluations, as `vero compare --json` prints it (model/cli-json.ts CompareJson). */
export type PairedComparison = Omit<z.infer<typeof CompareJson>, 'a' | 'b' | 'rankedBy' | 'harborVersions'>;

export interface CompareOptions {
  resamples?: number;
  seed?: string;
  passThreshold?: number;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** Percentile interval of the mean of `xs` over resamples with replacement, from a seeded generator. */
export function bootstrapMeanCi(xs: number[], resamples: number, seed: string): [number, number] {
  const rng = seedrandom(seed);
  const n = xs.length;
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += xs[Math.floor(rng() * n)]!;
    means[r] = sum / n;
  }
  means.sort();
  const at = (q: number) => means[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))]!;
  return [at(0.025), at(0.975)];
}

/** Exact two-sided McNemar p-value: the binomial test of the discordant pairs against 1/2. */
export function mcnemarExact(aOnly: number, bOnly: number): number {
  const n = aOnly + bOnly;
  if (n === 0) return 1;
  return Math.min(1, 2 * jStat.binomial.cdf(Math.min(aOnly, bOnly), n, 0.5));
}

/**
 * The one decision rule of `vero compare` and `vero best` (its runner-up): B is better (A is) when the paired
 * bootstrap 95% interval of the mean per-task delta lies above 0 (below 0) and the exact two-sided sign test over
 * the tasks whose scores differ (McNemar's test, when scores are pass/fail) gives p < 0.05. Either alone is not
 * enough: on a few tasks that all moved one way the bootstrap interval excludes 0 while the sign test cannot.
 */
const DECISION_ALPHA = 0.05;

function decide(deltas: readonly number[], ci95: [number, number] | null): PairedComparison['verdict'] {
  const signP = mcnemarExact(deltas.filter((x) => x < 0).length, deltas.filter((x) => x > 0).length);
  if (ci95 === null || signP >= DECISION_ALPHA) return 'not resolved';
  return ci95[0] > 0 ? 'B better' : ci95[1] < 0 ? 'A better' : 'not resolved';
}

/** Whether `best` is told apart from `runnerUp` by the decision rule above (`vero best`), over the tasks both evaluated. */
export function beatsRunnerUp(best: Parameters<typeof taskScoresOf>[0], runnerUp: Parameters<typeof taskScoresOf>[0]): boolean {
  return comparePaired(taskScoresOf(runnerUp), taskScoresOf(best)).verdict === 'B better';
}

export function comparePaired(a: Map<string, number>, b: Map<string, number>, opts: CompareOptions = {}): PairedComparison {
  const resamples = opts.resamples ?? 10_000;
  const seed = opts.seed ?? 'vero-compare';
  const passThreshold = opts.passThreshold ?? 1;
  const shared = [...a.keys()].filter((t) => b.has(t)).sort();
  const deltas = shared.map((task) => ({ task, a: a.get(task)!, b: b.get(task)!, delta: b.get(task)! - a.get(task)! }));
  const d = deltas.map((x) => x.delta);
  const meanDelta = mean(d);
  const ci95 = d.length >= 2 ? bootstrapMeanCi(d, resamples, seed) : null;
  const pass = (s: number) => s >= passThreshold;
  const flippedToPass = deltas.filter((x) => pass(x.b) && !pass(x.a)).map((x) => x.task);
  const flippedToFail = deltas.filter((x) => pass(x.a) && !pass(x.b)).map((x) => x.task);
  const pValue = mcnemarExact(flippedToFail.length, flippedToPass.length);
  const verdict = decide(d, ci95);
  const sd = d.length >= 2 ? jStat.stdev(d, true) : 0;
  const tasksToResolve = meanDelta !== 0 && sd > 0 ? Math.ceil(((1.96 * sd) / Math.abs(meanDelta)) ** 2) : null;
  const fmt = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;
  const interval = ci95 ? ` (95% CI ${fmt(ci95[0])} to ${fmt(ci95[1])})` : '';
  let summary: string;
  if (shared.length === 0) summary = 'not resolved: the two evaluations share no task';
  else if (verdict !== 'not resolved') summary = `${verdict}: mean delta ${fmt(meanDelta)} over ${shared.length} shared task(s)${interval}`;
  else if (meanDelta === 0 && flippedToPass.length === 0 && flippedToFail.length === 0)
    summary = `not resolved: no difference on ${shared.length} shared task(s)`;
  else
    summary = `not resolved at this sample size: mean delta ${fmt(meanDelta)} over ${shared.length} shared task(s)${interval}${
      tasksToResolve !== null && tasksToResolve > shared.length
        ? ` — about ${tasksToResolve - shared.length} more task(s) would resolve a delta of this size`
        : ''
    }`;
  return {
    n: shared.length,
    deltas,
    onlyInA: [...a.keys()].filter((t) => !b.has(t)).sort(),
    onlyInB: [...b.keys()].filter((t) => !a.has(t)).sort(),
    meanA: mean(deltas.map((x) => x.a)),
    meanB: mean(deltas.map((x) => x.b)),
    meanDelta,
    ci95,
    bootstrap: { resamples, seed },
    mcnemar: { passThreshold, aOnly: flippedToFail.length, bOnly: flippedToPass.length, pValue },
    flippedToPass,
    flippedToFail,
    verdict,
    tasksToResolve,
    summary,
  };
}

/**
 * An evaluation's per-task scores for a paired comparison: an error row counts as 0, as in its mean; a task a
 * spend cap kept from running (`not_run`) was not evaluated, so it is not among the tasks both evaluated.
 */
export function taskScoresOf(r: { tasks: readonly { task: string; status: string; score: number | null }[] | null }): Map<string, number> {
  return new Map((r.tasks ?? []).filter((t) => t.status !== 'not_run').map((t) => [t.task, t.status === 'scored' ? (t.score ?? 0) : 0]));
}
