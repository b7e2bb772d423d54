/**
 * The objective's direction (build.yaml `objective`): scores are what the benchmark reports (a latency, a cost,
 * an error count when minimised); the reward written for Harbor is always "higher is better", so a minimised
 * score is negated. What a failure counts as must then be the worst value, never 0 (a 0 latency is perfect):
 * `failure_value`, required when minimising.
 */
export type Direction = 'maximize' | 'minimize';

/** a is strictly better than b. */
export function better(a: number, b: number, direction: Direction): boolean {
  return direction === 'maximize' ? a > b : a < b;
}

/** Sort comparator: the best first. */
export function bestFirst(direction: Direction): (a: number, b: number) => number {
  return direction === 'maximize' ? (a, b) => b - a : (a, b) => a - b;
}

/** The reward (higher is better) of a score. */
export function rewardOf(score: number, direction: Direction): number {
  return direction === 'maximize' ? score : score === 0 ? 0 : -score;
}
