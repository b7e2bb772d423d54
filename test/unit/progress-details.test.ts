/** The Web UI's current details of an evaluation and of its chunks (model/evaluation/progress-details.ts). */
import { newProgress } from '../../model/evaluation/progress';
import { MAX_PROGRESS_REPORTS, progressDetails, reportsProgressAt, withReports } from '../../model/evaluation/progress-details';

test('the details say tasks done of all, running, errors and the mean so far (errors count as 0), concurrency and a pause', () => {
  const p = { ...newProgress(10, 'running'), done: 4, running: 2, scored: 3, errors: 1, scoreSum: 2, concurrency: 3 };
  expect(progressDetails(p)).toBe(
    '**4 / 10 tasks done** · 2 running · 1 error · mean 0.500 over 4 finished (errors count as 0) · concurrency 3',
  );
  expect(progressDetails(newProgress(5, 'preparing'))).toBe('[preparing] **0 / 5 tasks done** · 0 running · 0 errors · no score yet');
  const paused = { ...p, paused: { since: '2026-01-01T00:00:00.000Z', stopRunning: true } };
  expect(progressDetails(paused, 'eval-x')).toMatch(
    / · paused since 2026-01-01T00:00:00.000Z \(running tasks stopped\): vero resume eval-x$/,
  );
  // Tasks a spend cap kept from running are not in the mean.
  const capped = { ...p, done: 6, notRun: 2, spendCapReached: 'cost 1.00 USD ≥ cap 1.00 USD' };
  expect(progressDetails(capped)).toContain('mean 0.500 over 4 finished (errors count as 0) · 2 not run (cost 1.00 USD ≥ cap 1.00 USD)');
});

test('running chunks add their last reports to the finished chunks’ counts', () => {
  const finished = { ...newProgress(30, 'running'), done: 10, scored: 10, scoreSum: 7 };
  const sum = withReports(finished, [
    { chunkIndex: 1, done: 3, running: 2, scored: 2, errors: 1, scoreSum: 1.5 },
    { chunkIndex: 2, done: 1, running: 1, scored: 0, errors: 0, scoreSum: 0, notRun: 1 },
  ]);
  expect(sum).toMatchObject({ done: 14, running: 3, scored: 12, errors: 1, scoreSum: 8.5, notRun: 1 });
  expect(finished.done).toBe(10);
});

test('a chunk reports every task when it is small, else at most MAX_PROGRESS_REPORTS times', () => {
  expect([1, 2, 3].map((d) => reportsProgressAt(d, 3))).toEqual([true, true, true]);
  for (const total of [21, 100, 500, 1000]) {
    const reports = Array.from({ length: total }, (_, i) => reportsProgressAt(i + 1, total)).filter(Boolean).length;
    expect(reports).toBe(MAX_PROGRESS_REPORTS);
    expect(reportsProgressAt(total, total)).toBe(true);
  }
});

test('tasks tearing down are shown beside the running ones, and added up across chunks', () => {
  const p = { ...newProgress(10, 'running' as const), done: 4, running: 2, tearingDown: 3, scored: 4, scoreSum: 2 };
  expect(progressDetails(p)).toContain('2 running, tearing down 3 · ');
  expect(progressDetails({ ...p, tearingDown: 0 })).toContain('2 running · ');
  const sum = withReports({ ...newProgress(30, 'running'), tearingDown: 0 }, [
    { chunkIndex: 1, done: 0, running: 2, tearingDown: 1, scored: 0, errors: 0, scoreSum: 0 },
    { chunkIndex: 2, done: 0, running: 1, tearingDown: 2, scored: 0, errors: 0, scoreSum: 0 },
  ]);
  expect(sum).toMatchObject({ running: 3, tearingDown: 3 });
});
