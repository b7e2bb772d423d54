/**
 * Pause and resume (`vero pause`, `vero resume`): no task starts while paused, the running ones finish (or are
 * stopped and run again on resume, their jobs resumed), status and list say "paused", and the pause survives a
 * run that continues as new and a SIGKILLed worker. Real dev server, real workers, the Harbor stand-in. The
 * scenarios are independent (each its own task queue, evaluation and worker) and run concurrently.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { getProgress } from '../../client/running-eval';
import { listEvaluations } from '../../client/eval-listing';
import { partialResults } from '../../client/partial-results';
import { evaluationDetail } from '../../client/view-data';
import { evaluationPage } from '../../cli/view-pages';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { pauseEvaluation, resumeEvaluation } from '../../client/pause';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { evalFixture, invocations, runsPerTask } from '../helpers/fixtures';
import { conforming } from '../helpers/json-schema';
import { pidAlive, runVero, sleep, spawnWorker, until } from '../helpers/process';
import { address, cancelAndSettle, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(240_000);

const starts = (log: string) => invocations(log).filter((i) => i.event === 'start');

async function startEval(f: { configFile: string }, q: string) {
  const c: Client = await client();
  const cfg = loadEvalConfig(f.configFile);
  const input = await prepareEvalInput(cfg, 'improved');
  const { handle } = await startOrAttach(c, input, cfg.temporal.task_queue);
  return { c, id: input.evalId, handle, conn: ['--address', address()], q };
}

test.concurrent(
  'paused: no task starts, the running one finishes, status, --json and list say so, across a continue-as-new; resumed: the rest run once each',
  async () => {
    const q = uniqueQueue('pause');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      tasks: { names: ['count-words', 'hello-world', 'sum-numbers'] },
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario: { default: { reward: 1, duration_ms: 3000 } },
      // One chunk per run: the run whose chunk ends while paused continues as new, carrying the pause.
      execution: { concurrency: 1, chunk_size: 1, chunks_per_run: 1 },
    });
    await withWorker(q, async () => {
      const { c, id, handle, conn } = await startEval(f, q);
      try {
        await until('the first harbor', async () => starts(f.invocationLog).length === 1);
        const firstRun = (await handle.describe()).runId;
        const paused = await runVero(['pause', id, ...conn]);
        expect(paused.stdout).toMatch(new RegExp(`^${id} paused \\(since .*\\): no task starts; running tasks finish`));
        // Pausing again changes nothing, and says so.
        const again = conforming<Record<string, unknown>>('pause', (await runVero(['pause', id, '--json', ...conn])).stdout);
        expect(again).toMatchObject({ evalId: id, paused: true, stopRunning: false, changed: false });
        // The running task finishes; its chunk ends, the run continues as new, and the next run starts nothing.
        await until('the first task to finish', async () => (await getProgress(c, id)).done === 1);
        await until('the run to continue as new', async () => (await handle.describe()).runId !== firstRun);
        await sleep(5000);
        expect(starts(f.invocationLog)).toHaveLength(1);
        const status = await runVero(['status', id, ...conn]);
        expect(status.stdout).toMatch(/paused since .*: no task starts; 0 running; 1\/3 done, 0 errors/);
        const json = conforming<{ progress: { paused?: { since: string } } }>(
          'status',
          (await runVero(['status', id, '--json', ...conn])).stdout,
        );
        expect(json.progress.paused?.since).toBe(again.since);
        await until('list to say paused', async () => (await listEvaluations(c)).find((e) => e.evalId === id)?.status === 'paused');
        // vero view's page of it says paused, not running.
        const page = evaluationPage(await evaluationDetail(c, id, f.home, () => ''), null);
        expect(page).toContain('partial: the evaluation is paused (no task starts until vero resume)');

        const resumed = await runVero(['resume', id, ...conn]);
        expect(resumed.stdout).toBe(`${id} resumed: tasks start again\n`);
        expect(conforming('resume', (await runVero(['resume', id, '--json', ...conn])).stdout)).toMatchObject({
          paused: false,
          changed: false,
        });
        const result = (await handle.result()) as CandidateResult;
        expect(result).toMatchObject({ status: 'completed', nTasks: 3, nScored: 3 });
        expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 1, 'hello-world': 1, 'sum-numbers': 1 });
        // Visibility is eventually consistent: the listing follows the result.
        await until('list to say completed', async () => (await listEvaluations(c)).find((e) => e.evalId === id)?.status === 'completed');
        // Finished: nothing to pause any more, said in one line.
        await expect(pauseEvaluation(c, id)).rejects.toThrow(`${id} has finished (COMPLETED); it cannot be paused`);
      } finally {
        await cancelAndSettle(id);
      }
    });
  },
);

test.concurrent(
  'pause --stop-running: the running harbors stop at once, nothing starts; on resume they run again, their jobs resumed (scored trials kept)',
  async () => {
    const q = uniqueQueue('pause-stop');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      tasks: { names: ['count-words', 'hello-world'] },
      // Two trials per task, one after the other: the first scores at once, the second runs long (then short).
      harbor: { n_attempts: 2, n_concurrent_trials: 1, env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario: {
        default: [
          { reward: 1, duration_ms: 100 },
          { reward: 1, duration_ms: 60_000 },
          { reward: 1, duration_ms: 500 },
        ],
      },
      execution: { concurrency: 2 },
    });
    await withWorker(q, async () => {
      const { c, id, handle } = await startEval(f, q);
      try {
        const scoredTrials = async () => {
          const jobs = path.join(f.home, 'runs', id);
          const out: Record<string, string> = {};
          for (const file of fs.existsSync(jobs) ? fs.readdirSync(jobs, { recursive: true, encoding: 'utf8' }) : []) {
            if (!file.endsWith(`${path.sep}result.json`) || file.split(path.sep).length < 5) continue;
            const text = fs.readFileSync(path.join(jobs, file), 'utf8');
            if ((JSON.parse(text) as { verifier_result?: { rewards?: unknown } }).verifier_result?.rewards) out[file] = text;
          }
          return out;
        };
        await until('both tasks to have their first trial scored', async () => Object.keys(await scoredTrials()).length === 2);
        const kept = await scoredTrials();
        const pids = starts(f.invocationLog).map((i) => i.pid);
        expect(pids).toHaveLength(2);
        expect(await pauseEvaluation(c, id, { stopRunning: true })).toMatchObject({ paused: true, stopRunning: true, changed: true });
        await until('the running harbors to stop', async () => !pids.some(pidAlive), 20_000);
        await until('no task to run', async () => (await getProgress(c, id)).running === 0);
        await sleep(3000);
        expect(starts(f.invocationLog)).toHaveLength(2);
        expect((await getProgress(c, id)).paused).toMatchObject({ stopRunning: true });

        expect(await resumeEvaluation(c, id)).toMatchObject({ paused: false, changed: true });
        const result = (await handle.result()) as CandidateResult;
        expect(result).toMatchObject({ status: 'completed', nTasks: 2, nScored: 2 });
        // Each stopped task ran again once; its scored first trial was kept, not run again.
        expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 2, 'hello-world': 2 });
        const after = await scoredTrials();
        for (const [file, text] of Object.entries(kept)) expect(after[file]).toBe(text);
        for (const row of result.tasks!) expect(row).toMatchObject({ status: 'scored', score: 1, nTrials: 2 });
        expect(await resumeEvaluation(c, id).catch((e: Error) => e.message)).toMatch(/has finished \(COMPLETED\)/);
      } finally {
        await cancelAndSettle(id);
      }
    });
  },
);

test.concurrent('paused, then the worker is SIGKILLed: a new worker keeps it paused, and on resume every task runs once', async () => {
  const q = uniqueQueue('pause-crash');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    tasks: { names: ['count-words', 'hello-world', 'sum-numbers'] },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1, duration_ms: 2000 } },
    execution: { concurrency: 1 },
  });
  let w = spawnWorker(address(), q);
  const { c, id, handle } = await startEval(f, q);
  try {
    await until('the first harbor', async () => starts(f.invocationLog).length === 1);
    await pauseEvaluation(c, id);
    await until('the running task to finish', async () => {
      const p = await getProgress(c, id);
      return p.done === 1 && p.running === 0;
    });
    w.kill('SIGKILL');
    await sleep(500);
    w = spawnWorker(address(), q);
    const p = await until('the new worker to answer', () => getProgress(c, id), 60_000);
    expect(p.paused).toBeDefined();
    await sleep(4000);
    expect(starts(f.invocationLog)).toHaveLength(1);
    await resumeEvaluation(c, id);
    const result = (await handle.result()) as CandidateResult;
    expect(result).toMatchObject({ status: 'completed', nScored: 3 });
    expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 1, 'hello-world': 1, 'sum-numbers': 1 });
  } catch (e) {
    throw new Error(`${(e as Error).message}\nworker log:\n${w.tail()}`);
  } finally {
    await cancelAndSettle(id);
    w.kill('SIGTERM');
  }
});

test.concurrent(
  'pause --stop-running while the attempts died with their worker: no error row; on resume each task is adopted or runs again',
  async () => {
    const q = uniqueQueue('pause-stop-crash');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      tasks: { names: ['count-words', 'hello-world'] },
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario: { default: { reward: 1, duration_ms: 25_000 } },
      // The dead attempts time out 10 s after their last heartbeat, with their cancellation requested by the pause.
      execution: { concurrency: 2, heartbeat_timeout: '10s' },
    });
    let w = spawnWorker(address(), q);
    const { c, id, handle } = await startEval(f, q);
    try {
      await until('both harbors', async () => starts(f.invocationLog).length === 2);
      w.kill('SIGKILL');
      w = spawnWorker(address(), q);
      await until('the new worker to answer', () => getProgress(c, id), 60_000);
      expect(await pauseEvaluation(c, id, { stopRunning: true })).toMatchObject({ paused: true, stopRunning: true });
      await until('no task to run (the dead attempts timed out)', async () => (await getProgress(c, id)).running === 0, 60_000);
      const paused = await getProgress(c, id);
      expect(paused).toMatchObject({ done: 0, errors: 0 });
      await resumeEvaluation(c, id);
      const result = (await handle.result()) as CandidateResult;
      expect(result).toMatchObject({ status: 'completed', nTasks: 2, nScored: 2, nErrors: 0 });
      expect(result.score).toBeCloseTo(1, 6);
    } catch (e) {
      throw new Error(`${(e as Error).message}\nworker log:\n${w.tail()}`);
    } finally {
      await cancelAndSettle(id);
      w.kill('SIGTERM');
    }
  },
);

test.concurrent('pause --stop-running: the stopped tasks are pending in the rows so far, not errors, until resumed', async () => {
  const q = uniqueQueue('pause-stop-rows');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    tasks: { names: ['count-words', 'hello-world'] },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: {
      default: [
        { reward: 1, duration_ms: 60_000 },
        { reward: 1, duration_ms: 300 },
      ],
    },
    execution: { concurrency: 2 },
  });
  await withWorker(q, async () => {
    const { c, id, handle } = await startEval(f, q);
    try {
      await until('both harbors', async () => starts(f.invocationLog).length === 2);
      await pauseEvaluation(c, id, { stopRunning: true });
      await until('no task to run', async () => (await getProgress(c, id)).running === 0);
      const rows = await partialResults(c, id);
      expect(rows.tasks.filter((t) => t.status === 'error')).toEqual([]);
      expect(rows.pending.sort()).toEqual(['count-words', 'hello-world']);
      await resumeEvaluation(c, id);
      expect(await handle.result()).toMatchObject({ status: 'completed', nScored: 2 });
    } finally {
      await cancelAndSettle(id);
    }
  });
});
