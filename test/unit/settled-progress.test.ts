import { newProgress, settledProgress } from '../../model/evaluation/progress';

test("a closed evaluation's phase says how it ended, whatever its last snapshot said", () => {
  const running = { ...newProgress(6, 'running'), done: 2, running: 0 };
  expect(settledProgress(running, 'RUNNING').phase).toBe('running');
  for (const [status, phase] of [
    ['COMPLETED', 'done'],
    ['FAILED', 'failed'],
    ['CANCELLED', 'cancelled'],
    ['TERMINATED', 'terminated'],
    ['TIMED_OUT', 'timed_out'],
  ] as const)
    expect([status, settledProgress(running, status).phase]).toEqual([status, phase]);
  // Tasks that were running when it stopped are counted as stopped, not running.
  expect(settledProgress({ ...running, running: 2 }, 'FAILED')).toMatchObject({ phase: 'failed', running: 0, stopped: 2 });
});

test('tasks tearing down when a closed evaluation stopped are counted as stopped too', () => {
  const p = { ...newProgress(6, 'running' as const), done: 2, running: 1, tearingDown: 2 };
  expect(settledProgress(p, 'CANCELLED')).toMatchObject({ phase: 'cancelled', running: 0, tearingDown: 0, stopped: 3 });
});
