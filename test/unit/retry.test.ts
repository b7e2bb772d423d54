import { chooseRetryTasks, mergeRetried, queuedRetryProblem, queueRetry } from '../../model/evaluation/retry';
import type { TaskResult } from '../../model/evaluation/task-result';

const row = (task: string, status: TaskResult['status'], score: number | null, extra: Partial<TaskResult> = {}): TaskResult =>
  ({
    task,
    status,
    score,
    metrics: {},
    trial: null,
    taskName: task,
    nTrials: 1,
    exceptions: [],
    jobDir: `/j/${task}`,
    error: status === 'error' ? 'boom' : null,
    ...extra,
  }) as TaskResult;

const rows = [row('a', 'scored', 1), row('b', 'error', null), row('c', 'scored', 0), row('d', 'error', null)];

test('chooseRetryTasks: named tasks and error rows, in the rows order, once each; unknown names and no choice refused', () => {
  expect(chooseRetryTasks(rows, { errors: true })).toEqual(['b', 'd']);
  expect(chooseRetryTasks(rows, { tasks: ['c', 'b'], errors: true })).toEqual(['b', 'c', 'd']);
  expect(chooseRetryTasks(rows, { tasks: ['c'] })).toEqual(['c']);
  expect(() => chooseRetryTasks(rows, { tasks: ['x', 'a', 'y'] })).toThrow('--task: not a task of this evaluation: x, y');
  expect(() => chooseRetryTasks(rows, {})).toThrow(/--task NAME…, or --errors/);
});

test('mergeRetried: only the retried rows change, each saying when and what it replaced; a row retried twice keeps the latest', () => {
  const merged = mergeRetried(rows, [row('b', 'scored', 1)], '2026-01-01T00:00:00.000Z');
  expect(merged.map((r) => [r.task, r.score])).toEqual([
    ['a', 1],
    ['b', 1],
    ['c', 0],
    ['d', null],
  ]);
  expect(merged[0]).toBe(rows[0]);
  expect(merged[1]!.retried).toEqual({ at: '2026-01-01T00:00:00.000Z', previous: { status: 'error', score: null, error: 'boom' } });
  const again = mergeRetried(merged, [row('b', 'scored', 0.5)], '2026-01-02T00:00:00.000Z');
  expect(again[1]!.retried).toEqual({ at: '2026-01-02T00:00:00.000Z', previous: { status: 'scored', score: 1, error: null } });
});

test('a retry queued in a running evaluation: requests merge (the first time stays), unknown names are refused', () => {
  const all = ['a', 'b', 'c'];
  expect(queuedRetryProblem(all, { tasks: ['a', 'x'] })).toBe('--task: not a task of this evaluation: x');
  expect(queuedRetryProblem(all, {})).toMatch(/name tasks with --task/);
  expect(queuedRetryProblem(all, { errors: true })).toBeNull();
  const first = queueRetry(null, { tasks: ['b'], requestedAt: 't1' });
  expect(first).toEqual({ tasks: ['b'], errors: false, requestedAt: 't1' });
  expect(queueRetry(first, { tasks: ['a', 'b'], errors: true, requestedAt: 't2' })).toEqual({
    tasks: ['b', 'a'],
    errors: true,
    requestedAt: 't1',
  });
});
