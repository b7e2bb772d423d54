/**
 * `vero trials` on several threads: the rows, unreadable files and chosen trials are those of one thread, whichever
 * thread scores which chunk, when a task's trials are named after another task, and when a thread cannot start.
 * The worker threads run the built script (dist/harbor/collate-thread.js: `npm test` builds first).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { collate, loadTrials } from '../../harbor/collate';
import { chunksOfWholeTasks, collateInParallel, type CollatedJobs } from '../../harbor/collate-parallel';
import { tempDir } from '../helpers/fixtures';

function writeTrial(jobs: string, job: string, dirName: string, body: Record<string, unknown> | string): void {
  const dir = path.join(jobs, job, dirName);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'result.json'), typeof body === 'string' ? body : JSON.stringify(body));
}

/** 3 jobs × 40 tasks × 2 attempts each, mixed outcomes, two unreadable files and one trial still running. */
function jobsDir(): string {
  const jobs = tempDir();
  for (let j = 0; j < 3; j++) {
    for (let t = 0; t < 40; t++) {
      for (let a = 0; a < 2; a++) {
        const task = `task-${String(t).padStart(2, '0')}`;
        const name = `${task}__j${j}a${a}xxx`;
        const failed = (t + j + a) % 5 === 0;
        writeTrial(jobs, `job-${j}`, name, {
          task_name: task,
          trial_name: name,
          task_id: { path: `/data/${task}` },
          verifier_result: failed ? null : { rewards: { reward: ((t * 7 + j * 3 + a) % 4) / 4 } },
          exception_info: failed ? { exception_type: 'AgentTimeoutError', exception_message: 'slow' } : null,
          agent_result: { cost_usd: 0.01 * (a + 1), n_input_tokens: 10 * t },
          finished_at: `2026-08-22T12:00:0${(t + a) % 10}Z`,
        });
      }
    }
  }
  writeTrial(jobs, 'job-1', 'task-07__broken1', '{"task_name": "task-07", "tri');
  writeTrial(jobs, 'job-2', 'task-33__broken2', { task_name: 'task-33' });
  fs.mkdirSync(path.join(jobs, 'job-2', 'task-12__running'));
  return jobs;
}

const oneThread = (dir: string) => collateInParallel(dir, { threads: 1 });
const comparable = (c: CollatedJobs) => ({ ...c, chosenFiles: [...c.chosenFiles].sort() });

test('chunks hold whole tasks, in task order', () => {
  const dirs = ['/j/b__1', '/j/a__1', '/k/b__2', '/k/c__1', '/j/a__2'];
  expect(chunksOfWholeTasks(dirs, 2)).toEqual([['/j/a__1', '/j/a__2'], ['/j/b__1', '/k/b__2'], ['/k/c__1']]);
  expect(chunksOfWholeTasks(dirs, 100)).toEqual([['/j/a__1', '/j/a__2', '/j/b__1', '/k/b__2', '/k/c__1']]);
});

test('worker threads score what one thread scores: rows, unreadable files in listing order, chosen trials', async () => {
  const jobs = jobsDir();
  const expected = await oneThread(jobs);
  const loaded = loadTrials(jobs);
  expect(expected.rows).toEqual(collate(loaded.trials, { invalid: loaded.invalid })); // one thread is loadTrials + collate
  expect(expected.rows).toHaveLength(40);
  expect(expected.invalid.map((b) => path.basename(path.dirname(b.file)))).toEqual(['task-07__broken1', 'task-33__broken2']);
  // Only the worker threads score (this one waits), in chunks of a few tasks, so the chunks really cross threads.
  const threaded = await collateInParallel(jobs, { threads: 3, chunkTrials: 12, scoreHere: false });
  expect(comparable(threaded)).toEqual(comparable(expected));
  const shared = await collateInParallel(jobs, { threads: 2, chunkTrials: 12, aggregate: 'mean' });
  expect(comparable(shared)).toEqual(comparable(await collateInParallel(jobs, { threads: 1, aggregate: 'mean' })));
});

test('a task whose trial dirs are named after another task: the rows are still one thread’s', async () => {
  const jobs = jobsDir();
  // task-05's result, in a dir named after task-30: its chunk is not task-05's.
  writeTrial(jobs, 'job-0', 'task-30__misnamed', {
    task_name: 'task-05',
    trial_name: 'task-30__misnamed',
    task_id: { path: '/data/task-05' },
    verifier_result: { rewards: { reward: 1 } },
    finished_at: '2026-08-23T00:00:00Z',
  });
  const expected = await oneThread(jobs);
  expect(expected.rows.find((r) => r.task === 'task-05')).toMatchObject({ score: 1, trial: 'task-30__misnamed' });
  expect(comparable(await collateInParallel(jobs, { threads: 2, chunkTrials: 12, scoreHere: false }))).toEqual(comparable(expected));
});

test('a worker thread that cannot run leaves its chunks to this one', async () => {
  const jobs = jobsDir();
  const script = path.join(tempDir(), 'missing-thread.js');
  const threaded = await collateInParallel(jobs, { threads: 2, chunkTrials: 12, scoreHere: false, script });
  expect(comparable(threaded)).toEqual(comparable(await oneThread(jobs)));
});
