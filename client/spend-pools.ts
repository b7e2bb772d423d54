/** Spend pools (one durable spend total over a batch of evaluations): joining one, and reading its state. */
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { type SpendCap, spendPoolWorkflowId } from '../model/evaluation/spend-cap';
import { ConfigError } from '../model/errors';
import { spendPool, spendPoolQuery, type SpendPoolState } from '../workflows';
import { queryWithinBound } from './worker-wait';

const capWords = (c: { maxCostUsd?: number | null; maxTokens?: number | null }) =>
  [...(c.maxCostUsd != null ? [`max_cost_usd ${c.maxCostUsd}`] : []), ...(c.maxTokens != null ? [`max_tokens ${c.maxTokens}`] : [])].join(
    ', ',
  );

/**
 * Starts the spend pool an evaluation names, or checks that the running one has the same caps (its memo), so a
 * batch cannot draw on one pool with two different caps. A pool that has ended (its cap reached, no member
 * left) is closed: starting an evaluation on it is refused, with what it spent.
 */
export async function ensureSpendPool(client: Client, cap: SpendCap, taskQueue: string): Promise<void> {
  const name = cap.pool!;
  const workflowId = spendPoolWorkflowId(name);
  const caps = { maxCostUsd: cap.maxCostUsd ?? null, maxTokens: cap.maxTokens ?? null };
  try {
    await client.workflow.start(spendPool, {
      workflowId,
      taskQueue,
      args: [
        {
          name,
          ...(cap.maxCostUsd !== undefined ? { maxCostUsd: cap.maxCostUsd } : {}),
          ...(cap.maxTokens !== undefined ? { maxTokens: cap.maxTokens } : {}),
        },
      ],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      memo: caps,
      staticSummary: `spend pool ${name}: ${capWords(caps)}`,
    });
  } catch (e) {
    if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    const ended = (await client.workflow
      .getHandle(workflowId)
      .result()
      .catch(() => null)) as SpendPoolState | null;
    throw new ConfigError(
      `execution.spend_pool: spend pool "${name}" has ended${ended?.reached ? ` (${ended.reached})` : ''}; name a new pool to spend more`,
    );
  }
  const memo = (await client.workflow.getHandle(workflowId).describe()).memo ?? {};
  if ((memo.maxCostUsd ?? null) !== caps.maxCostUsd || (memo.maxTokens ?? null) !== caps.maxTokens) {
    throw new ConfigError(
      `execution.spend_pool: spend pool "${name}" has ${capWords(memo as typeof caps) || 'no caps'}; this config says ${capWords(caps)} (one pool, one cap: use the same caps or another pool)`,
    );
  }
}

/**
 * The state of a spend pool (its totals, members and caps), from its workflow: a query while it runs (answered by
 * a worker within a bound), else its result. One that ended without one (cancelled, terminated) is refused by
 * its name and how it ended (ConfigError), as is one no worker answers for (InfrastructureError).
 */
export async function spendPoolState(client: Client, name: string): Promise<SpendPoolState> {
  const handle = client.workflow.getHandle(spendPoolWorkflowId(name));
  const d = await handle.describe();
  if (d.status.name === 'COMPLETED') return (await handle.result()) as SpendPoolState;
  if (d.status.name !== 'RUNNING')
    throw new ConfigError(
      `spend pool "${name}" ended ${d.status.name.toLowerCase()} without totals (its evaluations' own results keep what each spent); an evaluation naming it starts a new pool`,
    );
  return queryWithinBound(client, handle, spendPoolQuery, `spend pool "${name}"`, d.taskQueue);
}
