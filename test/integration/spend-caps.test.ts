/**
 * Spend caps end to end (real dev server, real worker, the stand-in reporting Harbor's cost_usd and tokens):
 * a cap reached mid fan-out starts no more tasks, lets the running one finish (or stops it after the grace
 * period), and ends `budget_exhausted` with `not_run` rows and denominators of the tasks that ran; a spend pool
 * is one durable total over several evaluations.
 */
import { prepareEvalInput } from '../../client/eval-input';
import { spendPoolState } from '../../client/spend-pools';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import type { TaskResult } from '../../model/evaluation/task-result';
import { ConfigError } from '../../model/errors';
import { evalFixture, invocations, runsPerTask, taskOf } from '../helpers/fixtures';
import { pidAlive, until } from '../helpers/process';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(120_000);

async function evaluate(f: { configFile: string }, candidate: string, overrides: Record<string, unknown> = {}) {
  const cfg = loadEvalConfig(f.configFile, overrides);
  const input = await prepareEvalInput(cfg, candidate);
  const c = await client();
  const { handle } = await startOrAttach(c, input, cfg.temporal.task_queue);
  return { handle, input, client: c };
}

const rows = (r: CandidateResult): TaskResult[] => r.tasks ?? [];

// Chunks of 2: the first chunk's lanes drain while its second task runs, and the parent must start no chunk
// with them. Chunks of 3: the first chunk must start no third task, and the second chunk never starts.
test.each([2, 3])(
  'a cost cap reached mid fan-out (chunks of %i): no task starts after it, the running one finishes, the rest are not_run with honest denominators',
  async (chunkSize) => {
    const q = uniqueQueue('costcap');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      // The first task alone spends the cap while the second runs beside it (two lanes): the second finishes, and
      // neither lane starts another task (a lane starts its next task only once its last spend was metered).
      scenario: {
        tasks: { 'add-cli-flag': { reward: 1, cost_usd: 3, duration_ms: 300 } },
        default: { reward: 0.5, cost_usd: 0.25, duration_ms: 1500 },
      },
      execution: { concurrency: 2, chunk_size: chunkSize, max_cost_usd: 2 },
    });
    await withWorker(q, async () => {
      const r = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
      expect(r.status).toBe('budget_exhausted');
      expect(r.nTasks).toBe(6);
      const notRun = rows(r).filter((t) => t.status === 'not_run');
      const ran = rows(r).filter((t) => t.status !== 'not_run');
      expect(ran.map((t) => t.task)).toEqual(['add-cli-flag', 'count-words']);
      expect(notRun).toHaveLength(4);
      for (const t of notRun) expect(t.error).toMatch(/^not started: max_cost_usd \$2\.00 reached \(\$3\.0000 spent\)/);
      // Harbor ran exactly the tasks that ran, once each; nothing of the not_run ones.
      expect(runsPerTask(f.invocationLog)).toEqual({ 'add-cli-flag': 1, 'count-words': 1 });
      // Denominators are the tasks that ran: (1 + 0.5) / 2, errors and uncertainty over those two.
      expect(r.nRun).toBe(2);
      expect(r.score).toBeCloseTo(0.75);
      expect(r.nErrors).toBe(0);
      expect(r.errorRate).toBe(0);
      expect(r.uncertainty?.n).toBe(2);
      expect(r.spend).toEqual({
        maxCostUsd: 2,
        maxTokens: null,
        pool: null,
        spent: { costUsd: 3.25, tokens: 0, unmetered: 0 },
        reached: 'max_cost_usd $2.00 reached ($3.0000 spent)',
        nNotRun: 4,
      });
      expect(r.usage?.costUsd).toBeCloseTo(3.25);
    });
  },
);

test('a token cap with a grace period: the task running when it is reached is stopped after the grace, its harbor killed', async () => {
  const q = uniqueQueue('tokencap');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: {
      tasks: { 'add-cli-flag': { reward: 1, n_input_tokens: 900, n_output_tokens: 200, duration_ms: 200 } },
      default: { reward: 1, n_input_tokens: 10, n_output_tokens: 10, duration_ms: 60_000 },
    },
    // Two lanes: the 60 s task runs beside the one that reaches the cap.
    execution: { concurrency: 2, max_tokens: 1000, budget_grace: '1s', stop_grace: '5s' },
  });
  await withWorker(q, async () => {
    const began = Date.now();
    const r = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
    // Well before the 60 s task would have finished.
    expect(Date.now() - began).toBeLessThan(40_000);
    expect(r.status).toBe('budget_exhausted');
    const stopped = rows(r).find((t) => t.task === 'count-words')!;
    expect(stopped.status).toBe('not_run');
    expect(stopped.error).toBe('stopped after the 1s grace period: max_tokens 1000 reached (1100 spent)');
    expect(rows(r).filter((t) => t.error?.startsWith('not started:'))).toHaveLength(4);
    expect(r.nRun).toBe(1);
    expect(r.score).toBe(1);
    expect(r.spend?.spent).toEqual({ costUsd: 0, tokens: 1100, unmetered: 0 });
    expect(runsPerTask(f.invocationLog)).toEqual({ 'add-cli-flag': 1, 'count-words': 1 });
    // The stopped harbor is gone before the row is written (the activity waits for its process group).
    const stoppedRun = invocations(f.invocationLog).find((i) => i.event === 'start' && taskOf(i) === 'count-words')!;
    expect(pidAlive(stoppedRun.pid)).toBe(false);
  });
});

test('a spend pool is one total over a batch: the second evaluation stops when the pool is spent, the pool closes, a third is refused', async () => {
  const q = uniqueQueue('pool');
  const pool = `batch-${q}`;
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    // Two lanes: the second evaluation's first two tasks run side by side.
    scenario: { default: { reward: 1, cost_usd: 1, duration_ms: 2500 } },
    tasks: { names: ['count-words', 'hello-world', 'sum-numbers'] },
    execution: { concurrency: 2, max_cost_usd: 4, spend_pool: pool },
  });
  await withWorker(q, async () => {
    const c = await client();
    // The first spends $3 of the pool's $4 and completes.
    const a = (await (await evaluate(f, 'baseline')).handle.result()) as CandidateResult;
    expect(a.status).toBe('completed');
    expect(a.spend?.spent.costUsd).toBe(3);
    expect((await spendPoolState(c, pool)).spent.costUsd).toBe(3);
    // Other caps on the same pool are refused before anything starts.
    await expect(evaluate(f, 'improved', { 'execution.max_cost_usd': 10 })).rejects.toThrow(
      /execution\.spend_pool: spend pool "batch-.*" has max_cost_usd 4; this config says max_cost_usd 10/,
    );
    // The second reaches the pool's cap with its first task; the one running beside it finishes, no third starts.
    const b = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
    expect(b.status).toBe('budget_exhausted');
    expect(rows(b).map((t) => t.status)).toEqual(['scored', 'scored', 'not_run']);
    expect(rows(b)[2]!.error).toBe(`not started: max_cost_usd $4.00 reached ($4.0000 spent in spend pool ${pool})`);
    expect(b.spend).toMatchObject({ pool, spent: { costUsd: 2 }, nNotRun: 1 });
    // The pool is spent and nobody draws on it: it has ended with the batch's totals, and refuses a third.
    const closed = await c.workflow.getHandle(`vero-spend-pool-${pool}`).result();
    expect(closed).toMatchObject({
      spent: { costUsd: 5 },
      members: [],
      spentBy: { [a.evalId]: { costUsd: 3 }, [b.evalId]: { costUsd: 2 } },
    });
    const third = evaluate(f, 'improved', { 'tasks.names': ['hello-world'] });
    await expect(third).rejects.toThrow(ConfigError);
    await expect(third).rejects.toThrow(/spend pool "batch-.*" has ended \(max_cost_usd \$4\.00 reached/);
  });
});

test('the spend so far crosses continue-as-new: a cap reached in the second run counts what the first spent', async () => {
  const q = uniqueQueue('capcan');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: { default: { reward: 1, cost_usd: 1 } },
    // One task per chunk, two chunks per run: the first run spends $2 and continues as new.
    execution: { concurrency: 1, chunk_size: 1, chunks_per_run: 2, max_cost_usd: 3 },
  });
  await withWorker(q, async () => {
    const { handle, client: c, input } = await evaluate(f, 'improved');
    const r = (await handle.result()) as CandidateResult;
    const d = await c.workflow.getHandle(input.evalId).describe();
    expect(d.raw.workflowExecutionInfo?.firstRunId).not.toBe(d.runId); // it did continue as new
    expect(r.status).toBe('budget_exhausted');
    expect(rows(r).map((t) => t.status)).toEqual(['scored', 'scored', 'scored', 'not_run', 'not_run', 'not_run']);
    expect(r.spend).toMatchObject({ spent: { costUsd: 3 }, reached: 'max_cost_usd $3.00 reached ($3.0000 spent)', nNotRun: 3 });
    expect(Object.keys(runsPerTask(f.invocationLog))).toHaveLength(3);
  });
});

test('a spend pool cancelled while an evaluation draws on it: no task starts after, it ends budget_exhausted ("spend pool ended")', async () => {
  const q = uniqueQueue('pool-ended');
  const pool = `ended-${q}`;
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1, cost_usd: 0.1, duration_ms: 3000 } },
    execution: { concurrency: 1, max_cost_usd: 0.35, spend_pool: pool },
  });
  await withWorker(q, async () => {
    const { handle, client: c } = await evaluate(f, 'improved');
    await until('the first harbor', async () => invocations(f.invocationLog).some((i) => i.event === 'start'));
    await c.workflow.getHandle(`vero-spend-pool-${pool}`).cancel();
    const r = (await handle.result()) as CandidateResult;
    expect(r.status).toBe('budget_exhausted');
    expect(rows(r).filter((t) => t.status === 'scored')).toHaveLength(1);
    expect(rows(r).filter((t) => t.status === 'not_run')).toHaveLength(5);
    for (const t of rows(r).filter((x) => x.status === 'not_run')) expect(t.error).toMatch(/^not started: spend pool ended/);
    expect(r.spend?.reached).toMatch(/^spend pool ended/);
    expect(Object.keys(runsPerTask(f.invocationLog))).toHaveLength(1);
  });
});

test('a spend pool cancelled while a task runs: its members are told at once, and the running task is stopped after budget_grace', async () => {
  const q = uniqueQueue('pool-cancel-grace');
  const pool = `cancelled-${q}`;
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1, cost_usd: 0.1, duration_ms: 60_000 } },
    tasks: { names: ['count-words', 'hello-world'] },
    execution: { concurrency: 1, max_cost_usd: 1, spend_pool: pool, budget_grace: '1s', stop_grace: '5s' },
  });
  await withWorker(q, async () => {
    const { handle, client: c } = await evaluate(f, 'improved');
    await until('the first harbor', async () => invocations(f.invocationLog).some((i) => i.event === 'start'));
    await c.workflow.getHandle(`vero-spend-pool-${pool}`).cancel();
    const r = (await handle.result()) as CandidateResult;
    expect(r.status).toBe('budget_exhausted');
    expect(rows(r).map((t) => t.error)).toEqual([
      'stopped after the 1s grace period: spend pool ended: it was cancelled, so nothing meters the spend any more',
      'not started: spend pool ended: it was cancelled, so nothing meters the spend any more',
    ]);
    expect(Object.keys(runsPerTask(f.invocationLog))).toEqual(['count-words']);
  });
});
