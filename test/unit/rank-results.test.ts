/** The one ranking of evaluations: `vero best` (and its runner-up), `vero report` and the library's pickBest. */
import { type EvalStatus, rankResults } from '../../model/evaluation/candidate-result';

const r = (evalId: string, score: number, nErrors = 0, startedAt = '2026-01-01T00:00:00Z', status: EvalStatus = 'completed') => ({
  evalId,
  score,
  nErrors,
  startedAt,
  status,
});

test.each([
  ['higher score first', [r('a', 0.5), r('b', 0.7)], ['b', 'a']],
  ['then fewer errors', [r('a', 0.5, 2), r('b', 0.5, 1)], ['b', 'a']],
  ['then the earlier start', [r('a', 0.5, 0, '2026-01-02T00:00:00Z'), r('b', 0.5, 0, '2026-01-01T00:00:00Z')], ['b', 'a']],
  ['then the id', [r('b', 0.5), r('a', 0.5)], ['a', 'b']],
  ['a failed evaluation is ranked by its score', [r('a', 0.2, 5, undefined, 'failed'), r('b', 0.1)], ['a', 'b']],
  ["a spend cap's partial evaluation is not ranked", [r('a', 0.9, 0, undefined, 'budget_exhausted'), r('b', 0.1)], ['b']],
])('%s', (_why, results, order) => {
  expect(rankResults([...results]).map((x) => x.evalId)).toEqual(order);
});
