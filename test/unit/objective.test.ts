/** The objective's direction (model/compiled-task/objective.ts): what "better" means, and the reward Harbor gets. */
import { bestFirst, better, rewardOf } from '../../model/compiled-task/objective';

test('maximize: higher is better and the reward is the score', () => {
  expect(better(0.6, 0.5, 'maximize')).toBe(true);
  expect(better(0.5, 0.5, 'maximize')).toBe(false);
  expect([0.2, 0.9, 0.5].sort(bestFirst('maximize'))).toEqual([0.9, 0.5, 0.2]);
  expect(rewardOf(0.7, 'maximize')).toBe(0.7);
});

test('minimize: lower is better and the reward is the negated score (never -0)', () => {
  expect(better(1.5, 2, 'minimize')).toBe(true);
  expect(better(2, 2, 'minimize')).toBe(false);
  expect([0.2, 0.9, 0.5].sort(bestFirst('minimize'))).toEqual([0.2, 0.5, 0.9]);
  expect(rewardOf(12.5, 'minimize')).toBe(-12.5);
  expect(Object.is(rewardOf(0, 'minimize'), 0)).toBe(true);
});
