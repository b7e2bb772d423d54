/**
 * A spend pool: one durable total over several evaluations (a candidate batch) that name it in
 * `execution.spend_pool`. Its caps are fixed when it starts (the first evaluation's `max_cost_usd` /
 * `max_tokens`; start-eval refuses an evaluation whose caps differ). Members join, forward each finished
 * task's spend, and leave when they end; once a cap is reached every member, and every later joiner, is told
 * `spendCapReached`. The pool ends when its cap is reached and no member runs (it is then closed: a new
 * evaluation naming it is refused); its history stays bounded by continuing as new.
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { addSpend, capReached, NO_SPEND, type Spend, spendToAdd } from '../model/spend-cap';
import {
  poolJoinSignal,
  poolLeaveSignal,
  poolMeteredSignal,
  poolSpentSignal,
  spendCapReachedSignal,
  spendPoolQuery,
  type SpendPoolState,
} from './spend-signals';
import { SPEND_POOL_ENDED_PATCH } from './spend-meter';

export interface SpendPoolInput {
  name: string;
  maxCostUsd?: number;
  maxTokens?: number;
}

/** What a run hands to the next when the pool continues as new. */
export interface SpendPoolCarried {
  spent: Spend;
  reached: string | null;
  members: string[];
  spentBy: Record<string, { costUsd: number; tokens: number }>;
  /** Each running member's tasks' totals counted so far (absent in histories recorded before). */
  counted?: Record<string, Record<string, Spend>>;
}

/** Events one run holds before it continues as new (each spend is one event, each notice about three). */
const POOL_EVENT_BUDGET = 4000;

/** Why every member stops when the pool is cancelled (the same words its members use when they find it gone). */
export const POOL_CANCELLED = 'spend pool ended: it was cancelled, so nothing meters the spend any more';

/**
 * Waits until the pool can close or continue as new. Cancelled meanwhile (patched 'spend-pool-ended'): every member
 * is told, as when a cap is reached, so none starts another task and a running one is stopped after its grace.
 */
async function untilClosable(closable: () => boolean, members: ReadonlySet<string>): Promise<void> {
  try {
    await condition(closable);
  } catch (err) {
    if (isCancellation(err) && patched(SPEND_POOL_ENDED_PATCH)) {
      const tell = (m: string) =>
        getExternalWorkflowHandle(m)
          .signal(spendCapReachedSignal, POOL_CANCELLED)
          .catch(() => undefined);
      await CancellationScope.nonCancellable(() => Promise.all([...members].map(tell)));
    }
    throw err;
  }
}

export async function spendPool(input: SpendPoolInput, carried?: SpendPoolCarried): Promise<SpendPoolState> {
  const cap = { maxCostUsd: input.maxCostUsd, maxTokens: input.maxTokens, pool: input.name };
  let spent = carried?.spent ?? NO_SPEND;
  let reached = carried?.reached ?? null;
  const members = new Set(carried?.members ?? []);
  const spentBy = { ...(carried?.spentBy ?? {}) };
  // A member's task totals, so a report that comes again (the member was reset) counts once; dropped once it leaves.
  const counted: Record<string, Record<string, Spend>> = { ...(carried?.counted ?? {}) };
  let sending = 0;
  const state = (): SpendPoolState => ({
    name: input.name,
    maxCostUsd: input.maxCostUsd ?? null,
    maxTokens: input.maxTokens ?? null,
    spent,
    reached,
    members: [...members].sort(),
    spentBy,
  });
  const tell = (evalId: string) => {
    if (reached === null) return;
    sending++;
    void getExternalWorkflowHandle(evalId)
      .signal(spendCapReachedSignal, reached)
      .catch(() => members.delete(evalId)) // it has ended
      .finally(() => sending--);
  };
  setHandler(spendPoolQuery, state);
  setHandler(poolJoinSignal, ({ evalId }) => {
    members.add(evalId);
    spentBy[evalId] ??= { costUsd: 0, tokens: 0 };
    tell(evalId);
  });
  setHandler(poolLeaveSignal, ({ evalId }) => {
    members.delete(evalId);
    delete counted[evalId];
  });
  /** The verdict on a spend the member waits for (its lane starts nothing before it): metered, reached or not. */
  const answer = (evalId: string, ack: number) => {
    sending++;
    void getExternalWorkflowHandle(evalId)
      .signal(poolMeteredSignal, { ack, reached })
      .catch(() => members.delete(evalId))
      .finally(() => sending--);
  };
  setHandler(poolSpentSignal, ({ evalId, ack, ...report }) => {
    const added = spendToAdd(members.has(evalId) ? (counted[evalId] ??= {}) : {}, report);
    spent = addSpend(spent, added);
    const mine = spentBy[evalId] ?? { costUsd: 0, tokens: 0 };
    spentBy[evalId] = { costUsd: mine.costUsd + added.costUsd, tokens: mine.tokens + added.tokens };
    if (reached === null) {
      reached = capReached(cap, spent);
      if (reached !== null) for (const m of members) tell(m);
    }
    if (ack !== undefined && patched('spend-verdict-before-next-task')) answer(evalId, ack);
  });
  const full = () => workflowInfo().historyLength > POOL_EVENT_BUDGET;
  await untilClosable(() => (reached !== null && members.size === 0 && sending === 0) || full(), members);
  await condition(() => sending === 0 && allHandlersFinished());
  if (!(reached !== null && members.size === 0)) {
    await continueAsNew<typeof spendPool>(input, { spent, reached, members: [...members], spentBy, counted });
  }
  return state();
}
