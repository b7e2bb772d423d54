/**
 * A chunk's side of a spend cap (model/evaluation/spend-cap.ts): the parent says when a cap is reached
 * (`spendCapReached`); from then on no task starts, and with `budget_grace` the tasks still running are
 * cancelled when the grace timer fires. With verdicts (patched 'spend-verdict-before-next-task'), a lane that goes
 * on waits for the parent's verdict on its last task's spend (`spendMetered`) before it starts another.
 */
import { CancellationScope, condition, isCancellation, setHandler, sleep } from '@temporalio/workflow';
import type { Progress } from '../model/evaluation/progress';
import { spendCapReachedSignal, spendMeteredSignal } from './spend-signals';

export class ChunkSpendStop {
  /** Why the chunk stopped (the cap in words), once the parent said so. */
  reason: string | null = null;
  private graceExpired = false;
  private readonly running = new Set<CancellationScope>();
  private lastSeq = 0;
  private readonly metered = new Set<number>();

  constructor(
    readonly graceSec: number | undefined,
    private readonly progress: Progress,
    /** Whether lanes wait for the parent's verdict on their spend (false in histories recorded before). */
    readonly verdicts = false,
  ) {
    setHandler(spendCapReachedSignal, (reason) => this.reached(reason));
    if (!verdicts) return;
    setHandler(spendMeteredSignal, ({ seq, reached }) => {
      if (reached !== null) this.reached(reached);
      this.metered.add(seq);
    });
  }

  /**
   * Reports a finished task's spend (`send` with its number; false: nobody meters any more) and waits until the
   * parent has metered it, so the lane starts its next task only after the cap check this spend fed.
   */
  async reportAndAwait(send: (seq: number) => Promise<boolean>): Promise<void> {
    const seq = ++this.lastSeq;
    if (!(await send(seq))) return;
    await condition(() => this.metered.has(seq) || this.reason !== null);
    this.metered.delete(seq);
  }

  private reached(reason: string): void {
    if (this.reason !== null) return;
    this.reason = reason;
    this.progress.spendCapReached = reason;
    if (this.graceSec === undefined) return;
    void sleep(this.graceSec * 1000).then(
      () => {
        this.graceExpired = true;
        for (const scope of this.running) scope.cancel();
      },
      () => undefined, // this chunk was cancelled meanwhile
    );
  }

  /** Runs a task so that the grace timer can cancel it (as it is, without a grace period). */
  async stoppable<T>(run: () => Promise<T>): Promise<T> {
    if (this.graceSec === undefined) return run();
    const scope = new CancellationScope();
    this.running.add(scope);
    try {
      return await scope.run(run);
    } finally {
      this.running.delete(scope);
    }
  }

  /** Whether a task's failure is this stop's grace timer cancelling it. */
  stoppedByGrace(err: unknown): boolean {
    return isCancellation(err) && this.graceExpired && this.reason !== null;
  }
}
