/**
 * The lane-grant protocol of one run of an evaluation (signals in lane-signals.ts). A lane is the right to run one
 * task at a time. The parent holds the lanes nobody uses (`freed`); chunks hold the rest. A chunk with no task
 * left to start hands each lane back as it frees (lanesFreed); the parent gives freed lanes to the newest chunk
 * that still has tasks (grantLanes), or starts the next chunk with them. So no lane idles while tasks remain,
 * whatever the durations, and never more than `concurrency` tasks are in flight.
 *
 * `vero set-concurrency` changes `concurrency` while it runs (setPoolConcurrency): raising adds freed lanes;
 * lowering removes idle lanes first and owes the rest (`owed`): every lane that comes back pays what is owed
 * before it can be granted again, and the newest chunk is told to hand back every lane it holds after its
 * current task (revokeLanes), so the only lanes that start tasks afterwards are granted ones, granted only once
 * nothing is owed. Invariant: lanes held by chunks + freed − owed = concurrency.
 *
 * Once a spend cap is reached (`stopped`), no lane is granted and no chunk started: the running chunks end.
 * While paused (`paused`, workflows/pause.ts), no lane is granted and no chunk started either, and the running
 * chunks are told (`tellChunks`); on resume both go on.
 */
import {
  type ChildWorkflowHandle,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ChunkInput, ChunkSummary } from '../model/evaluation/chunk-payloads';
import type { Progress } from '../model/evaluation/progress';
import type { TaskSpend } from '../model/evaluation/spend-cap';
import { chunkWorkflowId } from '../model/paths';
import { concurrencyChanged, grantAll, lanesTakenBack } from '../model/evaluation/lane-pool';
import { evaluateChunk } from './evaluate-chunk';
import type { PauseState } from '../model/evaluation/pause-state';
import { pauseChunkSignal, resumeChunkSignal } from './pause';
import { grantLanesSignal, type LanesFreed, lanesFreedSignal, revokeLanesSignal } from './lane-signals';
import { spendCapReachedSignal } from './spend-signals';
import { RESET_SAFE_CHUNKS } from './reset-safe';

export interface LanePool {
  concurrency: number;
  /** Lanes in the parent's hands, not yet granted. */
  freed: number;
  /** Lanes to take out of circulation as they come back, after concurrency was lowered. */
  owed: number;
  /** Asks the chunk that is starting tasks now to hand back every lane it holds (set while chunks run). */
  revokeNewest: (() => Promise<void>) | null;
  /** Why no lane is granted and no chunk started any more (a spend cap reached: workflows/spend-meter.ts). */
  stopped: string | null;
  /**
   * Meters the spend a freed lane carries, before the lane can be used again (set by the spend meter);
   * `metered` runs once the cap check that spend fed is done (a spend pool answers later).
   */
  meter?: (chunkIndex: number, spent: TaskSpend, metered?: () => void) => void;
  /** Lanes handed back with spend whose verdict is not back yet (a spend pool's): granted once it is. */
  held?: number;
  /** Set while the evaluation is paused: no lane is granted, no chunk started. */
  paused?: PauseState | null;
  /** Tells every running chunk to pause (stopping its running tasks or not), or to resume (null); set while chunks run. */
  tellChunks?: ((pause: { stopRunning: boolean } | null) => Promise<void>) | null;
}

export const newLanePool = (concurrency: number): LanePool => ({
  concurrency,
  freed: concurrency,
  owed: 0,
  revokeNewest: null,
  stopped: null,
});

/** Lanes coming back to the parent pay what is owed first; the rest can be granted again. */
function takeBack(pool: LanePool, lanes: number): void {
  Object.assign(pool, lanesTakenBack(pool, lanes));
}

/** The set-concurrency update: `concurrency` from now on (running tasks finish; see the file comment). */
export async function setPoolConcurrency(pool: LanePool, concurrency: number): Promise<void> {
  Object.assign(pool, concurrencyChanged(pool, concurrency));
  if (pool.owed > 0 && pool.revokeNewest) await pool.revokeNewest();
}

/** Takes every freed lane out of the pool, to grant them; how many. */
function takeFreed(pool: LanePool): number {
  const { counts, lanes } = grantAll(pool);
  Object.assign(pool, counts);
  return lanes;
}

/** What a run of chunks is given: its range, the pool, how to build a chunk's input, where summaries go. */
interface ChunkRun {
  firstChunk: number;
  /** Exclusive. */
  endChunk: number;
  pool: LanePool;
  chunkInput: (i: number, lanes?: number) => ChunkInput;
  addSummary: (s: ChunkSummary) => void;
  progress: Progress;
  /** Whether this run's history has room for no more chunks (it continues as new). */
  runFull: () => boolean;
}

/**
 * Runs chunks from `firstChunk` up to `endChunk` (exclusive) with the pool's lanes, starting none once
 * `runFull()` says this run's history has room for no more; returns, once all it started are done, the index
 * of the first chunk it did not start.
 */
export async function runChunksWithLaneGrants(
  firstChunk: number,
  endChunk: number,
  pool: LanePool,
  chunkInput: (i: number, lanes?: number) => ChunkInput,
  addSummary: (s: ChunkSummary) => void,
  progress: Progress,
  runFull: () => boolean = () => false,
): Promise<number> {
  return new LaneGrants({ firstChunk, endChunk, pool, chunkInput, addSummary, progress, runFull }).run();
}

/**
 * The parent's side of the protocol for one run of chunks: which chunks run, which one is the newest (the one
 * starting tasks, granted the freed lanes) and whether it has drained, and the chunk started ahead of its lanes.
 *
 * The next chunk is started ahead of its lanes (patched 'prestart-chunks'), with none: it waits for a grant. So
 * when the newest chunk has started its last task, the lane that frees next crosses to a chunk that already
 * runs (one signal), and its first workflow task and the server's creating it are off the critical path. An
 * ahead chunk holds no lane; once the pool stops (a spend cap) it is told so, and ends with its tasks not run.
 */
/** A child's start refused: a workflow with its id runs (the SDK's WorkflowExecutionAlreadyStartedError). */
const alreadyStarted = (err: unknown): boolean => err instanceof Error && err.name === 'WorkflowExecutionAlreadyStartedError';

class LaneGrants {
  private readonly running = new Map<number, Promise<void>>();
  private failure: unknown = null;
  private newest: number;
  private newestDrained = false;
  private readonly prestart: boolean;
  /** The chunk started ahead of its lanes (it holds none), until it becomes the newest. */
  private ahead: { index: number; started: Promise<unknown>; told: boolean } | null = null;
  /** Each chunk's workflow id when it is not the first one (a reset run's: see startChunk), and its run. */
  private readonly ids = new Map<number, string>();
  private readonly runIds = new Map<number, string>();

  constructor(private readonly r: ChunkRun) {
    this.newest = r.firstChunk - 1;
    this.prestart = patched('prestart-chunks');
    setHandler(lanesFreedSignal, (freed) => this.onLanesFreed(freed));
    r.pool.tellChunks = (pause) => this.tellChunks(pause);
    r.pool.revokeNewest = () => this.revokeNewest();
  }

  private get pool(): LanePool {
    return this.r.pool;
  }

  private id(i: number): string {
    return this.ids.get(i) ?? chunkWorkflowId(workflowInfo().workflowId, i);
  }

  /**
   * Starts chunk `i`. After a reset (patched 'reset-safe-chunks') the run that was reset away may have left its
   * chunk running under the id: that chunk is cancelled (its finished tasks' jobs stay on disk, and this run's
   * chunk collects them) and this run's chunk takes the next id. Histories before: the start failed the run.
   */
  private async startChunk(i: number, lanes: number, n = 0): Promise<ChildWorkflowHandle<typeof evaluateChunk>> {
    const workflowId = chunkWorkflowId(workflowInfo().workflowId, i, n);
    if (n > 0) this.ids.set(i, workflowId);
    try {
      const handle = await startChild(evaluateChunk, { workflowId, args: [this.r.chunkInput(i, lanes)] });
      this.runIds.set(i, handle.firstExecutionRunId);
      return handle;
    } catch (err) {
      if (!alreadyStarted(err) || !patched(RESET_SAFE_CHUNKS)) throw err;
      await getExternalWorkflowHandle(workflowId)
        .cancel()
        .catch(() => undefined); // it has just ended
      return this.startChunk(i, lanes, n + 1);
    }
  }

  /** Whether lanes come from a chunk of another run (one a reset replaced, or its signals applied again). */
  private fromAnotherRun({ chunkIndex, chunkRunId }: LanesFreed): boolean {
    return chunkRunId !== undefined && chunkRunId !== this.runIds.get(chunkIndex);
  }

  private onLanesFreed(freed: LanesFreed): void {
    const { chunkIndex, lanes, drained, spent } = freed;
    const pool = this.pool;
    if (this.fromAnotherRun(freed)) {
      // Not this run's lanes; what its task spent is metered (once: model/evaluation/spend-cap.ts).
      if (spent) pool.meter?.(chunkIndex, spent);
      return;
    }
    if (spent && pool.meter && patched('spend-verdict-before-next-task')) {
      // The lane is used again only once the cap check its spend fed is done (a pool's verdict comes later).
      pool.held = (pool.held ?? 0) + lanes;
      pool.meter(chunkIndex, spent, () => {
        pool.held! -= lanes;
        takeBack(pool, lanes);
      });
    } else {
      if (spent) pool.meter?.(chunkIndex, spent);
      takeBack(pool, lanes);
    }
    // Lanes handed back on request (revokeLanes) come from a chunk that still has tasks to start.
    if (chunkIndex === this.newest && drained !== false) this.newestDrained = true;
  }

  private async tellChunks(pause: { stopRunning: boolean } | null): Promise<void> {
    for (const i of [...this.running.keys()]) {
      const chunk = getExternalWorkflowHandle(this.id(i));
      await (pause ? chunk.signal(pauseChunkSignal, pause) : chunk.signal(resumeChunkSignal)).catch(() => undefined); // it just ended
    }
  }

  private async revokeNewest(): Promise<void> {
    if (this.newestDrained || !this.running.has(this.newest)) return;
    await getExternalWorkflowHandle(this.id(this.newest))
      .signal(revokeLanesSignal)
      .catch(() => undefined); // it just finished: its lanes are coming back anyway
  }

  private showRunning(): void {
    this.r.progress.runningChunks = [...this.running.keys()].map((i) => this.id(i));
  }

  private settle(i: number, done: Promise<ChunkSummary>): void {
    this.running.set(
      i,
      done.then(
        (summary) => {
          this.r.addSummary(summary);
          this.running.delete(i);
          this.showRunning();
        },
        (err: unknown) => {
          this.failure ??= err;
          this.running.delete(i);
        },
      ),
    );
  }

  private highestStarted(): number {
    return this.ahead?.index ?? this.newest;
  }

  private moreToStart(): boolean {
    return this.highestStarted() < this.r.endChunk - 1 && !this.r.runFull() && this.pool.stopped === null;
  }

  private startAhead(): void {
    if (!this.prestart || this.ahead !== null || !this.moreToStart()) return;
    const i = this.highestStarted() + 1;
    const child = this.startChunk(i, 0);
    this.ahead = { index: i, started: child, told: false };
    this.settle(
      i,
      child.then((h) => h.result()),
    );
    this.showRunning();
  }

  private start(lanes: number): void {
    const i = ++this.newest;
    this.newestDrained = false;
    this.settle(
      i,
      this.startChunk(i, lanes).then((h) => h.result()),
    );
    this.showRunning();
    this.r.progress.currentChunk = this.id(i);
    this.startAhead();
  }

  /** The ahead chunk becomes the newest, with these lanes. */
  private async promoteAhead(lanes: number): Promise<void> {
    const next = this.ahead!;
    this.ahead = null;
    this.newest = next.index;
    this.newestDrained = false;
    this.r.progress.currentChunk = this.id(this.newest);
    this.startAhead();
    await next.started; // long since, as a rule
    if (!(await this.grant(this.newest, lanes))) takeBack(this.pool, lanes);
  }

  private grant(i: number, lanes: number): Promise<boolean> {
    return getExternalWorkflowHandle(this.id(i))
      .signal(grantLanesSignal, lanes)
      .then(
        () => true,
        () => false,
      );
  }

  async run(): Promise<number> {
    const pool = this.pool;
    if (pool.stopped !== null) return this.r.firstChunk;
    // Paused before its first chunk (or a run continued as new while paused): wait for the resume.
    if (pool.paused) await condition(() => !pool.paused || pool.stopped !== null);
    if (pool.stopped !== null) return this.r.firstChunk;
    this.start(takeFreed(pool));
    try {
      await this.grantLanesUntilDone();
    } catch (err) {
      // Cancelled: the chunks are being cancelled too; return only once they (and their harbor runs) are done.
      if (isCancellation(err)) {
        this.r.progress.phase = 'cancelling';
        await Promise.all([...this.running.values()]);
      }
      throw err;
    } finally {
      pool.revokeNewest = null;
      pool.tellChunks = null;
    }
    if (this.failure !== null) throw this.failure;
    this.r.progress.runningChunks = [];
    return this.highestStarted() + 1;
  }

  private canGrant(): boolean {
    return this.pool.freed > 0 && this.pool.stopped === null && !this.pool.paused;
  }

  private aheadToTell(): boolean {
    return this.pool.stopped !== null && this.ahead !== null && !this.ahead.told && this.running.has(this.ahead.index);
  }

  /** Lanes held for a spend pool's verdict keep the loop going (they may start the next chunk); so do chunks left to start while paused. */
  private active(): boolean {
    return this.running.size > 0 || (this.pool.held ?? 0) > 0 || (Boolean(this.pool.paused) && this.moreToStart());
  }

  private async grantLanesUntilDone(): Promise<void> {
    while (this.active() && this.failure === null) {
      await condition(
        () =>
          this.failure !== null ||
          !this.active() ||
          this.aheadToTell() ||
          (this.canGrant() && (this.moreToStart() || this.ahead !== null || !this.newestDrained)),
      );
      this.showRunning();
      if (this.aheadToTell()) {
        await this.tellAheadToStop();
        continue;
      }
      if (this.failure !== null || !this.canGrant()) continue;
      await this.grantFreedLanes(takeFreed(this.pool));
    }
  }

  /** The pool stopped (a spend cap): the chunk started ahead ends with its tasks not run. */
  private async tellAheadToStop(): Promise<void> {
    const told = this.ahead!;
    told.told = true;
    await told.started;
    await getExternalWorkflowHandle(this.id(told.index))
      .signal(spendCapReachedSignal, this.pool.stopped!)
      .catch(() => undefined); // it ended meanwhile
  }

  private async grantFreedLanes(lanes: number): Promise<void> {
    if (!this.newestDrained && this.running.has(this.newest)) {
      // The newest chunk still has tasks to start: it takes the lanes (or hands back what it cannot use).
      if (!(await this.grant(this.newest, lanes))) takeBack(this.pool, lanes); // it just finished: the lanes go round again
    } else if (this.ahead !== null) {
      await this.promoteAhead(lanes);
    } else if (this.moreToStart()) {
      this.start(lanes);
    }
  }
}
