/**
 * `vero retry`: chosen tasks of a finished evaluation run again as a new run of its workflow; nothing else
 * re-runs, the result replaces only those rows (each saying when it was retried and what it replaced), and the
 * result file agrees. On a running evaluation the retry is queued and runs once its tasks have finished. Real dev
 * server, real worker, the Harbor stand-in. Each test has its own fixture, task queue and worker process: they run
 * side by side.
 */
import * as fs from 'node:fs';
import { retryTasks } from '../../client/retry';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { runsPerTask } from '../helpers/fixtures';
import { conforming } from '../helpers/json-schema';
import { retryFixture, startEvaluation } from '../helpers/evaluation';
import { runVero, until } from '../helpers/process';
import { getProgress } from '../../client/running-eval';
import { address } from '../helpers/temporal';

jest.setTimeout(240_000);

/** sum-numbers an error row and hello-world 0 in their first run; each scores when run again. */
const ERROR_THEN_SCORED = {
  tasks: { 'sum-numbers': [{ exception: 'RuntimeError' }, { reward: 1 }], 'hello-world': [{ reward: 0 }, { reward: 1 }] },
  default: { reward: 1 },
};

test.concurrent(
  'retry --errors, then --task: only those tasks run again, the result says which rows and when, its file agrees',
  async () => {
    // sum-numbers fails its first run (no reward: an error row after its one attempt), then scores.
    const { f, w } = retryFixture('retry', ERROR_THEN_SCORED);
    try {
      const { c, input, handle } = await startEvaluation(f.configFile);
      const first = (await handle.result()) as CandidateResult;
      expect(first).toMatchObject({ nTasks: 3, nScored: 2, nErrors: 1 });
      const firstRun = (await handle.describe()).runId;

      const conn = ['--address', address()];
      // Refused with the reason: no such task.
      const bad = await runVero(['retry', input.evalId, '--task', 'no-such-task', ...conn]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--task: not a task of this evaluation: no-such-task/);

      const out = await runVero(['retry', input.evalId, '--errors', '--wait', '--json', ...conn]);
      expect(out.code).toBe(0);
      const retried = conforming<{ tasks: string[]; requestedAt: string; previousRunId: string; result: CandidateResult }>(
        'retry',
        out.stdout,
      );
      expect(retried).toMatchObject({ tasks: ['sum-numbers'], previousRunId: firstRun });
      expect(retried.result).toMatchObject({ status: 'completed', nTasks: 3, nScored: 3, nErrors: 0, startedAt: first.startedAt });
      expect(retried.result.retries).toEqual([{ at: retried.requestedAt, tasks: ['sum-numbers'] }]);
      const rows = Object.fromEntries(retried.result.tasks!.map((t) => [t.task, t]));
      expect(rows['sum-numbers']).toMatchObject({
        status: 'scored',
        score: 1,
        retried: { at: retried.requestedAt, previous: { status: 'error', score: null } },
      });
      expect(rows['count-words']!.retried).toBeUndefined();
      expect(rows['hello-world']).toMatchObject({ score: 0 });
      // Only the error row ran again.
      expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 1, 'hello-world': 1, 'sum-numbers': 2 });

      // A named task, through the client library: the new run of the same workflow id, in its history.
      const again = await retryTasks(c, input.evalId, { tasks: ['hello-world'] });
      expect(again.tasks).toEqual(['hello-world']);
      const final = (await c.workflow.getHandle(input.evalId).result()) as CandidateResult;
      expect(final.score).toBeCloseTo(1, 6);
      expect(final.retries!.map((r) => r.tasks)).toEqual([['sum-numbers'], ['hello-world']]);
      expect(final.tasks!.find((t) => t.task === 'hello-world')).toMatchObject({ score: 1, retried: { previous: { score: 0 } } });
      expect(final.tasks!.find((t) => t.task === 'sum-numbers')!.retried!.at).toBe(retried.requestedAt);
      expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 1, 'hello-world': 2, 'sum-numbers': 2 });
      // The result file is the updated result, and `vero results` shows it.
      const file = JSON.parse(fs.readFileSync(final.resultFile, 'utf8')) as CandidateResult;
      expect(file.tasks).toEqual(final.tasks);
      const shown = JSON.parse((await runVero(['results', input.evalId, '--json', ...conn])).stdout) as CandidateResult;
      expect(shown.retries).toEqual(final.retries);
      // Each retry is a run of the evaluation's workflow: three runs, all completed.
      await until('three completed runs in visibility', async () => {
        const runs: string[] = [];
        for await (const e of c.workflow.list({ query: `WorkflowId = '${input.evalId}'` })) runs.push(e.status.name);
        return runs.length === 3 && runs.every((s) => s === 'COMPLETED');
      });
    } catch (e) {
      throw new Error(`${(e as Error).message}\nworker log:\n${w.tail()}`);
    } finally {
      w.kill('SIGTERM');
    }
  },
);

test.concurrent(
  'retry on a running evaluation: queued (refused for unknown names), run once its tasks finish; only those re-run',
  async () => {
    // count-words runs 20 s, so the evaluation is still running when the retry is asked for; sum-numbers fails
    // its first run (an error row), hello-world scores 0 first.
    const { f, w } = retryFixture(
      'retry-running',
      { tasks: { 'count-words': { reward: 1, duration_ms: 20_000 }, ...ERROR_THEN_SCORED.tasks }, default: { reward: 1 } },
      { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    );
    try {
      const { c, input, handle } = await startEvaluation(f.configFile);
      await until('the two short tasks done, count-words running', async () => {
        const p = await getProgress(c, input.evalId);
        return p.done === 2 && p.running === 1;
      });
      const firstRun = (await handle.describe()).runId;
      const conn = ['--address', address()];
      const bad = await runVero(['retry', input.evalId, '--task', 'no-such-task', ...conn]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--task: not a task of this evaluation: no-such-task/);

      const out = await runVero(['retry', input.evalId, '--task', 'hello-world', '--errors', '--json', ...conn]);
      expect(out.code).toBe(0);
      const queued = conforming<{ runId: string | null; previousRunId: string; tasks: string[]; requestedAt: string; queued?: object }>(
        'retry',
        out.stdout,
      );
      expect(queued).toMatchObject({ runId: null, previousRunId: firstRun, tasks: ['hello-world'], queued: { errors: true } });
      // Still running: count-words was not cut short.
      expect((await handle.describe()).status.name).toBe('RUNNING');

      const final = (await c.workflow.getHandle(input.evalId).result()) as CandidateResult;
      expect(final).toMatchObject({ status: 'completed', nTasks: 3, nScored: 3, nErrors: 0 });
      expect(final.score).toBeCloseTo(1, 6);
      expect(final.retries).toEqual([{ at: queued.requestedAt, tasks: ['hello-world', 'sum-numbers'] }]);
      const rows = Object.fromEntries(final.tasks!.map((t) => [t.task, t]));
      expect(rows['sum-numbers']).toMatchObject({ score: 1, retried: { at: queued.requestedAt, previous: { status: 'error' } } });
      expect(rows['hello-world']).toMatchObject({ score: 1, retried: { previous: { score: 0 } } });
      expect(rows['count-words']!.retried).toBeUndefined();
      // Each named and each error row ran once more; count-words once only.
      expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 1, 'hello-world': 2, 'sum-numbers': 2 });
      const file = JSON.parse(fs.readFileSync(final.resultFile, 'utf8')) as CandidateResult;
      expect(file.tasks).toEqual(final.tasks);
      // The retry is the next run of the evaluation's workflow: two runs, the first continued as new into it.
      await until('two runs in visibility', async () => {
        const runs: string[] = [];
        for await (const e of c.workflow.list({ query: `WorkflowId = '${input.evalId}'` })) runs.push(e.status.name);
        return runs.sort().join() === 'COMPLETED,CONTINUED_AS_NEW';
      });
    } catch (e) {
      throw new Error(`${(e as Error).message}\nworker log:\n${w.tail()}`);
    } finally {
      w.kill('SIGTERM');
    }
  },
);

/** A finished evaluation of three tasks: sum-numbers an error row, hello-world 0 (each scores when run again). */
async function finishedWithAnError(name: string) {
  const { w, f } = retryFixture(name, ERROR_THEN_SCORED);
  const { c, input, handle } = await startEvaluation(f.configFile);
  const first = (await handle.result()) as CandidateResult;
  expect(first).toMatchObject({ nTasks: 3, nErrors: 1 });
  return { w, c, evalId: input.evalId, first };
}

test.concurrent(
  'retry when the result file is not on the finalizing host: the rows come from Temporal; status counts every row and keeps the first start',
  async () => {
    const { w, c, evalId, first } = await finishedWithAnError('retry-nofile');
    try {
      // Share-nothing: the host that finalizes the retry does not have the file the first run wrote.
      fs.rmSync(first.resultFile);
      await retryTasks(c, evalId, { errors: true });
      const final = (await c.workflow.getHandle(evalId).result()) as CandidateResult;
      expect(final).toMatchObject({ status: 'completed', nTasks: 3, nScored: 3, nErrors: 0, startedAt: first.startedAt });
      expect(final.retries?.map((r) => r.tasks)).toEqual([['sum-numbers']]);
      expect(final.tasks!.find((t) => t.task === 'hello-world')).toMatchObject({ score: 0 });

      const conn = ['--address', address()];
      const status = await runVero(['status', evalId, ...conn]);
      expect(status.stdout).toMatch(/completed: 3\/3 done, 0 errors/);
      const json = conforming<{ startedAt: string; progress: { total: number; done: number } }>(
        'status',
        (await runVero(['status', evalId, '--json', ...conn])).stdout,
      );
      expect(json.progress).toMatchObject({ total: 3, done: 3 });
      expect(new Date(json.startedAt).toISOString()).toBe(new Date(first.startedAt).toISOString());
    } catch (e) {
      throw new Error(`${(e as Error).message}\nworker log:\n${w.tail()}`);
    } finally {
      w.kill('SIGTERM');
    }
  },
);

test.concurrent('two vero retry at once: one runs, the other is refused, saying that a retry of it is running', async () => {
  const { w, c, evalId } = await finishedWithAnError('retry-twice');
  try {
    const both = await Promise.allSettled([retryTasks(c, evalId, { errors: true }), retryTasks(c, evalId, { tasks: ['hello-world'] })]);
    expect(both.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    const refused = both.filter((s) => s.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect(String(refused[0]!.reason)).toMatch(
      /another vero retry of this evaluation is running \(tasks (sum-numbers|hello-world)\): retry again once it has finished/,
    );
    const final = (await c.workflow.getHandle(evalId).result()) as CandidateResult;
    expect(final.retries).toHaveLength(1);
    expect(final.tasks!.filter((t) => t.retried)).toHaveLength(1);
  } catch (e) {
    throw new Error(`${(e as Error).message}\nworker log:\n${w.tail()}`);
  } finally {
    w.kill('SIGTERM');
  }
});
