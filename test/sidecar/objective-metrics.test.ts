/**
 * The metrics an evaluation without a harness reports (vero's names for its Harbor backend's report: the mean, the
 * unscored share, the spread) and the constraints they break, as the sidecar records them for auto_best and finalize.
 */
import { outcomeMetrics } from '../../sidecar/engine';
import { constraintViolations } from '../../model/compiled-task/objective';

const sample = (id: number, score: number | null) => ({ id, name: `t${id}`, score, error: score === null ? 'no rewarded trial' : null });

test('score, error_rate and score_stddev of the cases (an unscored case counts as the failure value); a report’s own metrics when it has them', () => {
  const m = outcomeMetrics([sample(0, 1), sample(1, 0), sample(2, null), sample(3, 1)], 0);
  expect(m).toEqual({ score: 0.5, error_rate: 0.25, score_stddev: 0.5 });
  expect(constraintViolations(m, [{ metric: 'error_rate', operator: '<=', value: 0.1 }])).toEqual(['error_rate <= 0.1 (observed 0.25)']);
  expect(constraintViolations(m, [{ metric: 'score', operator: '>', value: 0.4 }])).toEqual([]);
  const reported = outcomeMetrics([{ ...sample(0, 2.5), metrics: { sum_radii: 2.5, valid: 1 } }], 0);
  expect(reported).toEqual({ sum_radii: 2.5, valid: 1 });
  expect(constraintViolations(reported, [{ metric: 'runtime_ms', operator: '<', value: 10 }])).toEqual([
    'runtime_ms < 10 (metric unavailable)',
  ]);
  for (const [op, ok] of [
    ['==', true],
    ['!=', false],
    ['<', false],
    ['<=', true],
    ['>', false],
    ['>=', true],
  ] as const)
    expect(constraintViolations(reported, [{ metric: 'valid', operator: op, value: 1 }])).toHaveLength(ok ? 0 : 1);
});
