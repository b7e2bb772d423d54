/** The verifier timeout of a compiled task covers finalize's worst case (model/compiled-task/finalize-bound.ts). */
import { evaluationBoundSec, finalizeBoundSec, finalizeEvaluations, type FinalizePlan } from '../../model/compiled-task/finalize-bound';

const plan = (over: Partial<FinalizePlan> = {}): FinalizePlan => ({
  mode: 'B',
  auto_best_k: 3,
  baseline_floor: false,
  selection_split: 'validation',
  targets: [{ split: 'test' }],
  splitSizes: { train: 10, validation: 9, test: 20 },
  timeoutSec: 600,
  maxConcurrency: 4,
  taskAttempts: 3,
  ...over,
});

test('auto_best: k re-scores of the selection split, the baseline when floored, then every target', () => {
  expect(finalizeEvaluations(plan())).toEqual([
    ['validation', 9],
    ['validation', 9],
    ['validation', 9],
    ['test', 20],
  ]);
  expect(finalizeEvaluations(plan({ baseline_floor: true, auto_best_k: 1 }))).toEqual([
    ['validation', 9],
    ['validation', 9],
    ['test', 20],
  ]);
  // Submit mode has the same worst case: without a submission it chooses as auto_best does.
  expect(finalizeEvaluations(plan({ auto_best_k: 1, targets: [{ split: 'test', sample_ids: [1, 2] }, { split: 'train' }] }))).toEqual([
    ['validation', 9],
    ['test', 2],
    ['train', 10],
  ]);
});

test('pinned baselines: a pinned selection score scores no seed for the floor; score_baseline scores it per unpinned target', () => {
  expect(finalizeEvaluations(plan({ baseline_floor: true, pinnedSelectionScore: true, auto_best_k: 1 }))).toEqual([
    ['validation', 9],
    ['test', 20],
  ]);
  const targets = [{ split: 'test' }, { split: 'train', baseline_reward: 0.4 }];
  expect(finalizeEvaluations(plan({ auto_best_k: 1, scoreBaseline: true, targets }))).toEqual([
    ['validation', 9],
    ['test', 20],
    ['train', 10],
    ['test', 20],
  ]);
});

test('Mode B: preflight + waves of tasks, each at its timeout for every attempt, with the back-off between attempts', () => {
  // 9 tasks at concurrency 4: 3 waves; a wave is 3 × 600 s + 2 × 120 s.
  expect(evaluationBoundSec(plan(), 9)).toBe(300 + 3 * (3 * 600 + 2 * 120));
  expect(evaluationBoundSec(plan(), 4)).toBe(300 + 1 * (3 * 600 + 2 * 120));
  expect(finalizeBoundSec(plan())).toBe(300 + 3 * (300 + 3 * 2040) + (300 + 5 * 2040));
});

test('Mode A: inference and scorer share one deadline per attempt', () => {
  expect(evaluationBoundSec(plan({ mode: 'A' }), 1000)).toBe(3 * 600 + 2 * 120);
  expect(finalizeBoundSec(plan({ mode: 'A', auto_best_k: 1 }))).toBe(300 + 2 * (3 * 600 + 2 * 120));
});

test('the drain comes first: drain_timeout plus the cancellation of what it left', () => {
  const base = finalizeBoundSec(plan({ mode: 'A' }));
  expect(finalizeBoundSec(plan({ mode: 'A', drainSec: 600 }))).toBe(base + 600 + 120);
});

test('attempts: each re-score runs up to rescore_attempts times, each target (and the seed on it) up to its max_attempts', () => {
  const targets = [{ split: 'test', max_attempts: 2 }, { split: 'train' }];
  expect(finalizeEvaluations(plan({ auto_best_k: 1, baseline_floor: true, rescore_attempts: 2, scoreBaseline: true, targets }))).toEqual([
    ['validation', 9],
    ['validation', 9],
    ['validation', 9],
    ['validation', 9],
    ['test', 20],
    ['test', 20],
    ['train', 10],
    ['test', 20],
    ['test', 20],
    ['train', 10],
  ]);
});
