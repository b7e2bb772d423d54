/**
 * Every trial that ran is metered: a failed trial that vero prunes before the task's next attempt (so Harbor
 * runs it again) keeps its cost_usd in the task's usage, the evaluation's spend and its cap.
 * Real dev server, real worker, the stand-in reporting each trial's cost_usd.
 */
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { evalFixture, runsPerTask } from '../helpers/fixtures';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(120_000);

async function run(names: string[], execution: Record<string, unknown>): Promise<{ r: CandidateResult; invocationLog: string }> {
  const q = uniqueQueue('pruned');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    // add-cli-flag's first trial runs its agent ($5), exits non-zero and leaves no reward: pruned before the retry,
    // whose trial scores for $0.50.
    scenario: {
      tasks: {
        'add-cli-flag': [
          { exception: 'NonZeroAgentExitCodeError', reward_file: 'missing', cost_usd: 5 },
          { reward: 1, cost_usd: 0.5 },
        ],
      },
      default: { reward: 1, cost_usd: 1 },
    },
    tasks: { names },
    execution: { concurrency: 1, ...execution },
  });
  return withWorker(q, async () => {
    const cfg = loadEvalConfig(f.configFile);
    const input = await prepareEvalInput(cfg, 'improved');
    const { handle } = await startOrAttach(await client(), input, cfg.temporal.task_queue);
    return { r: (await handle.result()) as CandidateResult, invocationLog: f.invocationLog };
  });
}

test("a failed trial pruned before the task's retry keeps its cost in the row, the evaluation's usage and its spend", async () => {
  const { r, invocationLog } = await run(['add-cli-flag', 'hello-world'], { max_cost_usd: 100 });
  expect(runsPerTask(invocationLog)).toEqual({ 'add-cli-flag': 2, 'hello-world': 1 });
  const row = r.tasks!.find((t) => t.task === 'add-cli-flag')!;
  expect(row.status).toBe('scored');
  expect(row.runs).toBe(2);
  expect(row.usage?.costUsd).toBeCloseTo(5.5);
  expect(r.usage?.costUsd).toBeCloseTo(6.5);
  expect(r.spend?.spent.costUsd).toBeCloseTo(6.5);
});

test('the cap sees the pruned trial: $5 is reached by the first task ($5 + $0.50), so no other task starts', async () => {
  const { r, invocationLog } = await run(['add-cli-flag', 'hello-world', 'sum-numbers'], { max_cost_usd: 5 });
  expect(r.status).toBe('budget_exhausted');
  expect(r.spend?.spent.costUsd).toBeCloseTo(5.5);
  expect(runsPerTask(invocationLog)).toEqual({ 'add-cli-flag': 2 });
});
