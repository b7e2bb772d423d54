/**
 * A chunk's tasks whose harbors have done their work and are tearing down (model/evaluation/lane-teardown.ts). Their lanes
 * run other tasks meanwhile; each task's row is settled when its activity ends, from Harbor's result.json as
 * before, and the chunk ends only after every one of them has (patched 'lane-released-at-teardown').
 */
import { CancellationScope, condition, patched, setHandler } from '@temporalio/workflow';
import type { EvalSettings } from '../model/evaluation/input';
import { releasesLane } from '../model/evaluation/lane-teardown';
import type { Progress } from '../model/evaluation/progress';
import { taskWorkDoneSignal } from './lane-signals';

export const LANE_TEARDOWN_PATCH = 'lane-released-at-teardown';
/** The default bound, absent `teardownConcurrency`: 2 × concurrency since this patch, the concurrency before. */
export const TEARDOWN_BOUND_PATCH = 'teardown-bound-twice-concurrency';

export class ChunkTeardowns {
  /** Tasks whose activities run in a lane now, and those of them whose harbors said they have done their work. */
  private readonly inLane = new Set<string>();
  private readonly workDone = new Set<string>();
  /** Tasks tearing down now, out of their lanes. */
  readonly tasks = new Set<string>();
  private readonly settling: Promise<void>[] = [];
  /** Whether the default bound is twice the concurrency (chunks started since the patch; asked only when it applies). */
  private readonly twice: boolean;

  constructor(
    private readonly settings: EvalSettings,
    private readonly progress: Progress,
    /** How a settling task's failure is kept (as a lane's is: chunk-lanes.ts). */
    private readonly keep: (p: Promise<void>) => Promise<void>,
  ) {
    this.twice = settings.teardownConcurrency === undefined && patched(TEARDOWN_BOUND_PATCH);
    setHandler(taskWorkDoneSignal, ({ task }) => {
      if (this.inLane.has(task)) this.workDone.add(task);
    });
  }

  /**
   * Waits while the task's activity runs in its lane: false once it ended (the lane settles it as before); true once
   * its harbor has done its work, `mayRelease` says yes and fewer than the bound are tearing down: the lane is
   * free, and the task counts as tearing down. Not cancellable itself: a cancel reaches the activity, whose end this
   * sees.
   */
  async released(task: string, ran: Promise<unknown>, mayRelease: () => boolean): Promise<boolean> {
    this.inLane.add(task);
    let ended = false;
    const end = () => {
      ended = true;
    };
    ran.then(end, end);
    const releasable = () => this.workDone.has(task) && mayRelease() && releasesLane(this.settings, this.tasks.size, this.twice);
    try {
      // Lanes waiting together are unblocked together: each checks again when its turn comes, and takes its place
      // in the tearing-down set at once, so the bound holds.
      while (!ended) {
        await CancellationScope.nonCancellable(() => condition(() => ended || releasable()));
        if (ended || !releasable()) continue;
        this.tasks.add(task);
        return true;
      }
      return false;
    } finally {
      this.inLane.delete(task);
      this.workDone.delete(task);
    }
  }

  /** The released task tears down out of its lane; `settle` takes its row once its activity ended. */
  aside<T>(task: string, ran: Promise<T>, settle: (row: T) => void): void {
    this.tasks.add(task);
    this.progress.tearingDown = this.tasks.size;
    const ended = ran.finally(() => {
      this.tasks.delete(task);
      this.progress.tearingDown = this.tasks.size;
    });
    this.settling.push(this.keep(ended.then(settle)));
  }

  /** Waits until every task that tore down (also ones released meanwhile) has settled. */
  async settled(): Promise<void> {
    for (let seen = 0; seen < this.settling.length; ) {
      const n = this.settling.length;
      await Promise.all(this.settling.slice(seen, n));
      seen = n;
    }
  }
}
