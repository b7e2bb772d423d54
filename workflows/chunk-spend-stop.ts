/**
 * A chunk's side of a spend cap (model/spend-cap.ts): the parent says when a cap is reached
 * (`spendCapReached`); from then on no task starts, and with `budget_grace` the tasks still running are
 * cancelled when the grace timer fires.
 */
import { CancellationScope, isCancellation, setHandler, sleep } from '@temporalio/workflow';
import type { Progress } from '../model/eval-types';
import { spendCapReachedSignal } from './queries';

export class ChunkSpendStop {
  /** Why the chunk stopped (the cap in words), once the parent said so. */
  reason: string | null = null;
  private graceExpired = false;
  private readonly running = new Set<CancellationScope>();

  constructor(
    readonly graceSec: number | undefined,
    private readonly progress: Progress,
  ) {
    setHandler(spendCapReachedSignal, (reason) => this.reached(reason));
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
