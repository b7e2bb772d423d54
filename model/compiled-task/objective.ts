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

/** vero's constraint operators (its ConstraintOperator). */
export const CONSTRAINT_OPERATORS = ['==', '!=', '<', '<=', '>', '>='] as const;
type ConstraintOperator = (typeof CONSTRAINT_OPERATORS)[number];

/** A metric of the evaluation's report that must satisfy `operator value` (vero's MetricConstraint). */
export interface MetricConstraint {
  metric: string;
  operator: ConstraintOperator;
  value: number;
}

const HOLDS: Record<ConstraintOperator, (a: number, b: number) => boolean> = {
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
};

/**
 * The constraints `metrics` break, each as `metric operator value (observed x)` or `metric unavailable`, as vero's
 * evaluate_objective decides them: a metric the report lacks breaks its constraint.
 */
export function constraintViolations(metrics: Record<string, number> | undefined, constraints: readonly MetricConstraint[]): string[] {
  const out: string[] = [];
  for (const c of constraints) {
    const observed = metrics?.[c.metric];
    const rule = `${c.metric} ${c.operator} ${c.value}`;
    if (observed === undefined || !Number.isFinite(observed)) out.push(`${rule} (metric unavailable)`);
    else if (!HOLDS[c.operator](observed, c.value)) out.push(`${rule} (observed ${observed})`);
  }
  return out;
}
