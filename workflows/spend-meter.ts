/**
 * The spend meter of one run of a capped evaluation (model/spend-cap.ts; signals in spend-signals.ts). Chunks report
 * each finished task's spend (`taskSpent`, or with the lane it frees: `lanesFreed`); the meter adds it up and, once a cap is reached (its own, or its
 * spend pool's: the pool decides and says `spendCapReached`), stops the lane pool (no chunk starts, no lane is
 * granted) and tells every running chunk once. A chunk that reports spend after the cap was reached and was
 * not told yet (it started as the cap was reached) is told then.
 *
 * A lane that goes on to another task waits for the verdict on the spend it reported (`seq` → `spendMetered`;
 * in a spend pool, once the pool's own verdict is back: `ack` → `poolMetered`), so no lane starts a task before
 * the cap check its own last spend fed (patched 'spend-verdict-before-next-task').
 */
import { CancellationScope, getExternalWorkflowHandle, patched, setHandler } from '@temporalio/workflow';
import type { Progress } from '../model/progress';
import { chunkWorkflowId } from '../model/paths';
import {
  addSpend,
  capReached,
  NO_SPEND,
  type Spend,
  type SpendCap,
  spendPoolWorkflowId,
  spendToAdd,
  type TaskSpend,
} from '../model/spend-cap';
import type { LanePool } from './lane-grants';
import {
  poolJoinSignal,
  poolLeaveSignal,
  poolMeteredSignal,
  poolSpentSignal,
  spendCapReachedSignal,
  spendMeteredSignal,
  taskSpentSignal,
} from './spend-signals';

/**
 * An evaluation whose spend pool has ended (cancelled, terminated, failed: a spend or a join cannot reach it) starts
 * no task any more: nothing would meter it (patched 'spend-pool-ended'; histories before: it went on uncapped).
 */
export const SPEND_POOL_ENDED_PATCH = 'spend-pool-ended';

function stopWhenPoolGone(cap: SpendCap, stop: (reason: string) => void): void {
  if (patched(SPEND_POOL_ENDED_PATCH))
    stop(`spend pool ended: ${cap.pool ?? ''} is not running, so nothing meters this evaluation's spend`);
}

export interface SpendMeter {
  /** What this evaluation's finished tasks spent (over every run). */
  spent: Spend;
  /** The cap reached, in words, or null. */
  reached: string | null;
  /** Tells the spend pool (if any) that this evaluation draws on it no more. */
  leavePool: () => Promise<void>;
}

export function meterSpend(cap: SpendCap, evalId: string, lanes: LanePool, progress: Progress, carried?: Spend): SpendMeter {
  const meter: SpendMeter = { spent: carried ?? NO_SPEND, reached: null, leavePool };
  const told = new Set<string>();
  const pool = cap.pool ? getExternalWorkflowHandle(spendPoolWorkflowId(cap.pool)) : null;

  function tell(chunkId: string, reason: string): void {
    if (told.has(chunkId)) return;
    told.add(chunkId);
    void getExternalWorkflowHandle(chunkId)
      .signal(spendCapReachedSignal, reason)
      .catch(() => told.delete(chunkId)); // not started yet, or done: told again when it reports
  }
  function stop(reason: string): void {
    if (meter.reached !== null) return;
    meter.reached = reason;
    lanes.stopped = reason;
    progress.spendCapReached = reason;
    for (const chunkId of progress.runningChunks ?? []) tell(chunkId, reason);
  }
  // Verdicts awaited from the spend pool, by the `ack` number sent with the spend.
  const awaited = new Map<number, () => void>();
  let acks = 0;
  setHandler(poolMeteredSignal, ({ ack, reached }) => {
    if (reached !== null) stop(reached);
    awaited.get(ack)?.();
    awaited.delete(ack);
  });
  // Each task's total counted so far in this run: a task reported again (after a reset) is counted once.
  const counted: Record<string, Spend> = {};
  /**
   * Meters a finished task's spend; `metered` runs once the cap check it fed is done (the pool's, when pooled);
   * `chunkId`: the chunk that reported it (by default the chunk's first id).
   */
  function record(chunkIndex: number, report: TaskSpend, metered?: () => void, chunkId = chunkWorkflowId(evalId, chunkIndex)): void {
    meter.spent = addSpend(meter.spent, spendToAdd(counted, report));
    if (pool) {
      const ack = metered ? ++acks : undefined;
      if (ack !== undefined) awaited.set(ack, metered!);
      // With the task's name, the pool counts its total once too (a reset run reports again what it reported).
      const { costUsd, tokens, unmetered, task } = report;
      const sent = { evalId, costUsd, tokens, unmetered, ...(task !== undefined ? { task } : {}), ...(ack !== undefined ? { ack } : {}) };
      void pool.signal(poolSpentSignal, sent).catch(() => {
        stopWhenPoolGone(cap, stop); // its verdict, if it reached its cap, was told to every member
        if (ack !== undefined) awaited.delete(ack);
        metered?.();
      });
    } else {
      const reason = capReached(cap, meter.spent);
      if (reason) stop(reason);
      metered?.();
    }
    if (meter.reached !== null) tell(chunkId, meter.reached);
  }
  setHandler(taskSpentSignal, ({ chunkIndex, seq, chunkId: sender, chunkRunId: _run, ...spent }) => {
    const chunkId = sender ?? chunkWorkflowId(evalId, chunkIndex);
    if (seq === undefined || !patched('spend-verdict-before-next-task')) return record(chunkIndex, spent, undefined, chunkId);
    // The lane that sent it waits for this answer before it starts another task.
    const answer = () =>
      void getExternalWorkflowHandle(chunkId)
        .signal(spendMeteredSignal, { seq, reached: meter.reached })
        .catch(() => undefined); // the chunk is gone
    record(chunkIndex, spent, answer, chunkId);
  });
  lanes.meter = record; // a freed lane's last task (lanesFreed)
  // The pool's verdict (its caps are over every evaluation that names it).
  setHandler(spendCapReachedSignal, stop);
  if (pool) void pool.signal(poolJoinSignal, { evalId }).catch(() => stopWhenPoolGone(cap, stop));
  // A continued run starts already stopped when the cap was reached in an earlier one.
  if (!pool) {
    const reason = capReached(cap, meter.spent);
    if (reason) stop(reason);
  }

  async function leavePool(): Promise<void> {
    // Also when this evaluation is being cancelled.
    if (pool) await CancellationScope.nonCancellable(() => pool.signal(poolLeaveSignal, { evalId }).catch(() => undefined));
  }
  return meter;
}
