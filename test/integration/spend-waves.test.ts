/**
 * A spend cap is checked before a lane starts its next task: the spend of the task a lane just finished reaches
 * the cap (the evaluation's, or its spend pool's) before that lane may start anything, so no task starts once
 * the cap is reached, at any concurrency, in one chunk or across chunks, with or without `budget_grace`.
 * Real dev server, real worker, the stand-in reporting each trial's cost_usd.
 */
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { evalFixture, runsPerTask } from '../helpers/fixtures';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(120_000);

// Every task alone spends the cap ($0.10 each against $0.10), so only tasks already running when the first
// finished may run: with concurrency N, at most the first wave of N.
const cases: [string, Record<string, unknown>, number][] = [
  ['concurrency 3, one chunk', { concurrency: 3 }, 3],
  ['concurrency 3, chunks of 2 (lanes cross chunks)', { concurrency: 3, chunk_size: 2 }, 3],
  ['concurrency 1', { concurrency: 1 }, 1],
  ['concurrency 1, chunks of 1', { concurrency: 1, chunk_size: 1 }, 1],
  ['concurrency 1 with budget_grace', { concurrency: 1, budget_grace: '30s' }, 1],
  ['concurrency 1 in a spend pool', { concurrency: 1, spend_pool: 'pool' }, 1],
  ['concurrency 2, chunks of 1, in a spend pool', { concurrency: 2, chunk_size: 1, spend_pool: 'pool' }, 2],
];

test.each(cases)('a $0.10 cap lets no task start once reached: %s', async (_name, execution, firstWave) => {
  const q = uniqueQueue('waves');
  const pooled = execution.spend_pool !== undefined;
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1, cost_usd: 0.1, duration_ms: 1200 } },
    execution: { max_cost_usd: 0.1, ...execution, ...(pooled ? { spend_pool: `p-${q}` } : {}) },
  });
  await withWorker(q, async () => {
    const cfg = loadEvalConfig(f.configFile);
    const input = await prepareEvalInput(cfg, 'improved');
    const { handle } = await startOrAttach(await client(), input, cfg.temporal.task_queue);
    const r = (await handle.result()) as CandidateResult;
    expect(r.status).toBe('budget_exhausted');
    const ran = Object.values(runsPerTask(f.invocationLog)).reduce((a, n) => a + n, 0);
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThanOrEqual(firstWave);
    expect(r.spend?.nNotRun).toBe(6 - ran);
    expect(r.spend?.spent.costUsd).toBeCloseTo(0.1 * ran);
  });
});
