/**
 * The spend meter of one run of a capped evaluation (model/evaluation/spend-cap.ts; signals in spend-signals.ts). Chunks report
 * each finished task's spend (`taskSpent`, or with the lane it frees: `lanesFreed`); the meter adds it up and, once a cap is reached (its own, or its
 * spend pool's: the pool decides and says `spendCapReached`), stops the lane pool (no chunk starts, no lane is
 * granted) and tells every running chunk once. A chunk that reports spend after the cap was reached and was
 * not told yet (it started as the cap was reached) is told then.
 *
 * A lane that goes on to another task waits for the verdict on the spend it reported (`seq` → `spendMetered`;
 * in a spend pool, once the pool's own verdict is back: `ack` → `poolMetered`), so no lane starts a task before
 * the cap check its own last spend fed (patched 'spend-verdict-before-next-task').
 */
import { CancellationScope, type ExternalWorkflowHandle, getExternalWorkflowHandle, patched, setHandler } from '@temporalio/workflow';
import type { Progress } from '../model/evaluation/progress';
import { chunkWorkflowId } from '../model/paths';
import { NO_SPEND, type Spend, type SpendCap, spendPoolWorkflowId, type TaskSpend } from '../model/evaluation/spend-cap';
import { SpendTotal } from '../model/evaluation/spend-ledger';
import type { LanePool } from './lane-grants';
import {
  poolJoinSignal,
  poolLeaveSignal,
  poolMeteredSignal,
  poolSpentSignal,
  spendCapReachedSignal,
  spendMeteredSignal,
  type SpendSignal,
  taskSpentSignal,
} from './spend-signals';

/**
 * An evaluation whose spend pool has ended (cancelled, terminated, failed: a spend or a join cannot reach it) starts
 * no task any more: nothing would meter it (patched 'spend-pool-ended'; histories before: it went on uncapped).
 */
export const SPEND_POOL_ENDED_PATCH = 'spend-pool-ended';

export function meterSpend(cap: SpendCap, evalId: string, lanes: LanePool, progress: Progress, carried?: Spend): SpendMeter {
  return new SpendMeter(cap, evalId, lanes, progress, carried);
}

export class SpendMeter {
  /** The cap reached, in words, or null. */
  reached: string | null = null;
  private readonly total: SpendTotal;
  /** The chunks told that the cap was reached. */
  private readonly told = new Set<string>();
  private readonly pool: ExternalWorkflowHandle | null;
  /** Verdicts awaited from the spend pool, by the `ack` number sent with the spend. */
  private readonly awaited = new Map<number, () => void>();
  private acks = 0;

  constructor(
    private readonly cap: SpendCap,
    private readonly evalId: string,
    private readonly lanes: LanePool,
    private readonly progress: Progress,
    carried?: Spend,
  ) {
    this.total = new SpendTotal(carried ?? NO_SPEND);
    this.pool = cap.pool ? getExternalWorkflowHandle(spendPoolWorkflowId(cap.pool)) : null;
    setHandler(poolMeteredSignal, ({ ack, reached }) => {
      if (reached !== null) this.stop(reached);
      this.awaited.get(ack)?.();
      this.awaited.delete(ack);
    });
    setHandler(taskSpentSignal, (report) => this.onTaskSpent(report));
    lanes.meter = (chunkIndex, spent, metered) => this.record(chunkIndex, spent, metered); // a freed lane's last task (lanesFreed)
    // The pool's verdict (its caps are over every evaluation that names it).
    setHandler(spendCapReachedSignal, (reason) => this.stop(reason));
    if (this.pool) void this.pool.signal(poolJoinSignal, { evalId }).catch(() => this.stopWhenPoolGone());
    // A continued run starts already stopped when the cap was reached in an earlier one.
    else this.stopAtCap();
  }

  /** What this evaluation's finished tasks spent (over every run). */
  get spent(): Spend {
    return this.total.spent;
  }

  /** Tells the spend pool (if any) that this evaluation draws on it no more; also when it is being cancelled. */
  async leavePool(): Promise<void> {
    const pool = this.pool;
    if (pool) await CancellationScope.nonCancellable(() => pool.signal(poolLeaveSignal, { evalId: this.evalId }).catch(() => undefined));
  }

  private onTaskSpent({ chunkIndex, seq, chunkId: sender, chunkRunId: _run, ...spent }: SpendSignal): void {
    const chunkId = sender ?? chunkWorkflowId(this.evalId, chunkIndex);
    if (seq === undefined || !patched('spend-verdict-before-next-task')) return this.record(chunkIndex, spent, undefined, chunkId);
    // The lane that sent it waits for this answer before it starts another task.
    const answer = () =>
      void getExternalWorkflowHandle(chunkId)
        .signal(spendMeteredSignal, { seq, reached: this.reached })
        .catch(() => undefined); // the chunk is gone
    this.record(chunkIndex, spent, answer, chunkId);
  }

  /**
   * Meters a finished task's spend; `metered` runs once the cap check it fed is done (the pool's, when pooled);
   * `chunkId`: the chunk that reported it (by default the chunk's first id).
   */
  private record(chunkIndex: number, report: TaskSpend, metered?: () => void, chunkId = chunkWorkflowId(this.evalId, chunkIndex)): void {
    this.total.add(report);
    if (this.pool) this.sendToPool(report, metered);
    else {
      this.stopAtCap();
      metered?.();
    }
    if (this.reached !== null) this.tell(chunkId, this.reached);
  }

  /** A pooled evaluation's spend goes to the pool, which decides (and answers `metered` with its verdict). */
  private sendToPool(report: TaskSpend, metered: (() => void) | undefined): void {
    const ack = metered ? ++this.acks : undefined;
    if (ack !== undefined) this.awaited.set(ack, metered!);
    // With the task's name, the pool counts its total once too (a reset run reports again what it reported).
    const { costUsd, tokens, unmetered, task } = report;
    const sent = {
      evalId: this.evalId,
      costUsd,
      tokens,
      unmetered,
      ...(task !== undefined ? { task } : {}),
      ...(ack !== undefined ? { ack } : {}),
    };
    void this.pool!.signal(poolSpentSignal, sent).catch(() => {
      this.stopWhenPoolGone(); // its verdict, if it reached its cap, was told to every member
      if (ack !== undefined) this.awaited.delete(ack);
      metered?.();
    });
  }

  private stopAtCap(): void {
    const reason = this.total.reachedOf(this.cap);
    if (reason) this.stop(reason);
  }

  private stopWhenPoolGone(): void {
    if (patched(SPEND_POOL_ENDED_PATCH))
      this.stop(`spend pool ended: ${this.cap.pool ?? ''} is not running, so nothing meters this evaluation's spend`);
  }

  private stop(reason: string): void {
    if (this.reached !== null) return;
    this.reached = reason;
    this.lanes.stopped = reason;
    this.progress.spendCapReached = reason;
    for (const chunkId of this.progress.runningChunks ?? []) this.tell(chunkId, reason);
  }

  private tell(chunkId: string, reason: string): void {
    if (this.told.has(chunkId)) return;
    this.told.add(chunkId);
    void getExternalWorkflowHandle(chunkId)
      .signal(spendCapReachedSignal, reason)
      .catch(() => this.told.delete(chunkId)); // not started yet, or done: told again when it reports
  }
}
