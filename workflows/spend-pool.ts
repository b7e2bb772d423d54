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
import { type PoolCounts, PoolLedger } from '../model/evaluation/spend-ledger';
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
export type SpendPoolCarried = PoolCounts;

/** Events one run holds before it continues as new (each spend is one event, each notice about three). */
const POOL_EVENT_BUDGET = 4000;

/** Why every member stops when the pool is cancelled (the same words its members use when they find it gone). */
const POOL_CANCELLED = 'spend pool ended: it was cancelled, so nothing meters the spend any more';

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
  const pool = new SpendPool(
    input,
    new PoolLedger({ maxCostUsd: input.maxCostUsd, maxTokens: input.maxTokens, pool: input.name }, carried),
  );
  const full = () => workflowInfo().historyLength > POOL_EVENT_BUDGET;
  await untilClosable(() => (pool.ledger.closable && pool.sending === 0) || full(), pool.ledger.members);
  await condition(() => pool.sending === 0 && allHandlersFinished());
  if (!pool.ledger.closable) {
    await continueAsNew<typeof spendPool>(input, pool.ledger.counts());
  }
  return pool.state();
}

/** One run of the pool: its members join, report spend and leave; each is told the cap once it is reached. */
class SpendPool {
  /** Signals on their way to members: the run ends only once none is. */
  sending = 0;

  constructor(
    private readonly input: SpendPoolInput,
    readonly ledger: PoolLedger,
  ) {
    setHandler(spendPoolQuery, () => this.state());
    setHandler(poolJoinSignal, ({ evalId }) => {
      ledger.join(evalId);
      this.tell(evalId);
    });
    setHandler(poolLeaveSignal, ({ evalId }) => ledger.leave(evalId));
    setHandler(poolSpentSignal, ({ evalId, ack, ...report }) => {
      if (ledger.add(evalId, report)) for (const m of ledger.members) this.tell(m);
      if (ack !== undefined && patched('spend-verdict-before-next-task')) this.answer(evalId, ack);
    });
  }

  state(): SpendPoolState {
    const { input, ledger } = this;
    return {
      name: input.name,
      maxCostUsd: input.maxCostUsd ?? null,
      maxTokens: input.maxTokens ?? null,
      spent: ledger.spent,
      reached: ledger.reached,
      members: [...ledger.members].sort(),
      spentBy: ledger.spentBy,
    };
  }

  /** The cap reached, told to a member (nothing while it is not). */
  private tell(evalId: string): void {
    if (this.ledger.reached === null) return;
    this.send(evalId, () => getExternalWorkflowHandle(evalId).signal(spendCapReachedSignal, this.ledger.reached!));
  }

  /** The verdict on a spend the member waits for (its lane starts nothing before it): metered, reached or not. */
  private answer(evalId: string, ack: number): void {
    this.send(evalId, () => getExternalWorkflowHandle(evalId).signal(poolMeteredSignal, { ack, reached: this.ledger.reached }));
  }

  private send(evalId: string, signal: () => Promise<void>): void {
    this.sending++;
    void signal()
      .catch(() => this.ledger.members.delete(evalId)) // it has ended
      .finally(() => this.sending--);
  }
}
