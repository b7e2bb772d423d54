/**
 * Which task a race runs next when earlier evaluations of the same tasks exist: tasks where earlier candidates
 * disagreed are drawn more often, with known probabilities, so that the race's sequences reweight them
 * (`WeightedWorCs`, model/race/confidence-sequence.ts) and stay anytime-valid for the mean over all the tasks.
 *
 * The design: for a paired difference D of two candidates on task u, the Horvitz–Thompson estimate's variance is
 * smallest with qᵤ ∝ √E[Dᵤ²] (the classical optimal-allocation result for probability-proportional-to-size
 * sampling). E[Dᵤ²] is estimated by how much earlier evaluations' scores on u differ pairwise — the mean of
 * (sₐ − s_b)² over their pairs, shrunk towards its mean over all tasks — and the probabilities are mixed with the
 * uniform ones (`UNIFORM_SHARE`), so no task is unlikely: a bad estimate costs power, never validity. Tasks are
 * drawn without replacement, each next one with probability ∝ its weight among the tasks left, from seeded draws
 * (the same seed and history, the same order). Pure: workflow code uses it.
 */
import { type CsOptions, type SequentialCs, type WeightedDraw, WeightedWorCs } from './confidence-sequence';
import { ConfigError } from '../errors';
import { draw, raceOrder } from './types';

/** The uniform share of each task's probability (a "defensive" mixture: no weight below this share of 1). */
export const UNIFORM_SHARE = 0.5;
/** Shrinkage of a task's disagreement towards the mean over tasks, in pairs of earlier scores. */
const SHRINK_PAIRS = 6;

/**
 * Each task's relative weight (mean 1 over the tasks) from the scores earlier evaluations gave it (same index as
 * the tasks; scores clipped to [0, 1]). Null when no task has two earlier scores or they never differ: then the
 * race runs in today's uniform order.
 */
export function taskWeights(history: readonly (readonly number[])[]): number[] | null {
  const clip = (s: number) => Math.min(1, Math.max(0, s));
  const stats = history.map((scores) => {
    const s = scores.map(clip);
    let sq = 0;
    for (let a = 0; a < s.length; a++) for (let b = a + 1; b < s.length; b++) sq += (s[a]! - s[b]!) ** 2;
    return { sq, pairs: (s.length * (s.length - 1)) / 2 };
  });
  const allPairs = stats.reduce((n, x) => n + x.pairs, 0);
  const allSq = stats.reduce((n, x) => n + x.sq, 0);
  if (allPairs === 0 || allSq === 0) return null;
  const overall = allSq / allPairs;
  const root = stats.map((x) => Math.sqrt((x.sq + SHRINK_PAIRS * overall) / (x.pairs + SHRINK_PAIRS)));
  const total = root.reduce((a, b) => a + b, 0);
  return root.map((r) => (1 - UNIFORM_SHARE) * ((r * root.length) / total) + UNIFORM_SHARE);
}

/** The tasks in the order drawn, and each draw's probabilities relative to a uniform draw (what reweights it). */
export interface WeightedOrder {
  order: string[];
  draws: WeightedDraw[];
}

/**
 * Draws every task without replacement, the next one with probability ∝ its weight among the tasks left
 * (successive sampling), from the seeded uniform draws of the race's shuffle (a stream of their own).
 */
export function weightedOrder(tasks: readonly string[], weights: readonly number[], seed: string): WeightedOrder {
  if (weights.length !== tasks.length || weights.some((w) => !(w > 0 && Number.isFinite(w))))
    throw new ConfigError(`weights: expected ${tasks.length} positive numbers, got ${weights.length}`);
  const left = tasks.map((_, i) => i);
  const order: string[] = [];
  const draws: WeightedDraw[] = [];
  for (let t = 0; left.length; t++) {
    const total = left.reduce((s, i) => s + weights[i]!, 0);
    const rel = (i: number) => (left.length * weights[i]!) / total;
    let target = draw(seed, t, 'vero-race-weighted') * total;
    let pick = left.length - 1;
    for (let k = 0; k < left.length; k++) {
      target -= weights[left[k]!]!;
      if (target < 0) {
        pick = k;
        break;
      }
    }
    const rels = left.map(rel);
    const chosen = left[pick]!;
    draws.push({ rel: rel(chosen), minRel: Math.min(...rels), maxRel: Math.max(...rels) });
    order.push(tasks[chosen]!);
    left.splice(pick, 1);
  }
  return { order, draws };
}

/** How a race draws its tasks: the seeded shuffle, or weighted by earlier evaluations' disagreement. */
export interface RacePlan {
  order: string[];
  /** Weighted only: each draw's probabilities relative to a uniform draw (what the sequences reweight by). */
  draws: WeightedDraw[] | null;
}

/**
 * The race's task order: with weights (from `taskWeights`), the weighted draw; without, today's seeded shuffle
 * (`raceOrder`), which the uniform sequences decide on exactly as before.
 */
export function racePlan(tasks: readonly string[], seed: string, weights: readonly number[] | null | undefined): RacePlan {
  if (!weights) return { order: raceOrder(tasks, seed), draws: null };
  const { order, draws } = weightedOrder(tasks, weights, seed);
  return { order, draws };
}

/**
 * A candidate's own mean over all the race's tasks, fed in the weighted order (the t-th push is the t-th draw):
 * the reweighted sequence on [0, 1], shaped as the uniform sequences are.
 */
export function weightedMeanCs(draws: readonly WeightedDraw[], opts: CsOptions): SequentialCs {
  const cs = new WeightedWorCs({ ...opts, population: draws.length, range: [0, 1] });
  let t = 0;
  return { push: (x) => cs.push(x, draws[t++]!), current: () => cs.current() };
}
