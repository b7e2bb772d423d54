/**
 * The lane-grant protocol of one run of an evaluation (signals in queries.ts). A lane is the right to run one
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
  condition,
  executeChild,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ChunkInput, ChunkSummary } from '../model/chunk-payloads';
import type { Progress } from '../model/progress';
import type { Spend } from '../model/spend-cap';
import { chunkWorkflowId } from '../model/paths';
import { evaluateChunk } from './evaluate-chunk';
import type { PauseState } from '../model/pause-state';
import { pauseChunkSignal, resumeChunkSignal } from './pause';
import { grantLanesSignal, lanesFreedSignal, revokeLanesSignal, spendCapReachedSignal } from './queries';

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
  meter?: (chunkIndex: number, spent: Spend, metered?: () => void) => void;
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
  const paid = Math.min(pool.owed, lanes);
  pool.owed -= paid;
  pool.freed += lanes - paid;
}

/** The set-concurrency update: `concurrency` from now on (running tasks finish; see the file comment). */
export async function setPoolConcurrency(pool: LanePool, concurrency: number): Promise<void> {
  const delta = concurrency - pool.concurrency;
  pool.concurrency = concurrency;
  if (delta >= 0) {
    const forgiven = Math.min(pool.owed, delta);
    pool.owed -= forgiven;
    pool.freed += delta - forgiven;
    return;
  }
  const idle = Math.min(pool.freed, -delta);
  pool.freed -= idle;
  pool.owed += -delta - idle;
  if (pool.owed > 0 && pool.revokeNewest) await pool.revokeNewest();
}

/**
 * Runs chunks from `firstChunk` up to `endChunk` (exclusive) with the pool's lanes, starting none once
 * `runFull()` says this run's history has room for no more; returns, once all it started are done, the index
 * of the first chunk it did not start.
 *
 * The next chunk is started ahead of its lanes (patched 'prestart-chunks'), with none: it waits for a grant. So
 * when the newest chunk has started its last task, the lane that frees next crosses to a chunk that already
 * runs (one signal), and its first workflow task and the server's creating it are off the critical path. An
 * ahead chunk holds no lane; once the pool stops (a spend cap) it is told so, and ends with its tasks not run.
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
  const id = (i: number) => chunkWorkflowId(workflowInfo().workflowId, i);
  const running = new Map<number, Promise<void>>();
  let failure: unknown = null;
  let newest = firstChunk - 1;
  let newestDrained = false;
  const prestart = patched('prestart-chunks');
  /** The chunk started ahead of its lanes (it holds none), until it becomes the newest. */
  let ahead: { index: number; started: Promise<unknown>; told: boolean } | null = null;
  setHandler(lanesFreedSignal, ({ chunkIndex, lanes, drained, spent }) => {
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
    if (chunkIndex === newest && drained !== false) newestDrained = true;
  });
  pool.tellChunks = async (pause) => {
    for (const i of [...running.keys()]) {
      const chunk = getExternalWorkflowHandle(id(i));
      await (pause ? chunk.signal(pauseChunkSignal, pause) : chunk.signal(resumeChunkSignal)).catch(() => undefined); // it just ended
    }
  };
  pool.revokeNewest = async () => {
    if (newestDrained || !running.has(newest)) return;
    await getExternalWorkflowHandle(id(newest))
      .signal(revokeLanesSignal)
      .catch(() => undefined); // it just finished: its lanes are coming back anyway
  };
  const settle = (i: number, done: Promise<ChunkSummary>) =>
    running.set(
      i,
      done.then(
        (summary) => {
          addSummary(summary);
          running.delete(i);
          progress.runningChunks = [...running.keys()].map(id);
        },
        (err: unknown) => {
          failure ??= err;
          running.delete(i);
        },
      ),
    );
  const highestStarted = () => ahead?.index ?? newest;
  const moreToStart = () => highestStarted() < endChunk - 1 && !runFull() && pool.stopped === null;
  const startAhead = () => {
    if (!prestart || ahead !== null || !moreToStart()) return;
    const i = highestStarted() + 1;
    const child = startChild(evaluateChunk, { workflowId: id(i), args: [chunkInput(i, 0)] });
    ahead = { index: i, started: child, told: false };
    settle(
      i,
      child.then((h) => h.result()),
    );
    progress.runningChunks = [...running.keys()].map(id);
  };
  const start = (lanes: number) => {
    const i = ++newest;
    newestDrained = false;
    settle(i, executeChild(evaluateChunk, { workflowId: id(i), args: [chunkInput(i, lanes)] }));
    progress.runningChunks = [...running.keys()].map(id);
    progress.currentChunk = id(i);
    startAhead();
  };
  /** The ahead chunk becomes the newest, with these lanes. */
  const promoteAhead = async (lanes: number) => {
    const next = ahead!;
    ahead = null;
    newest = next.index;
    newestDrained = false;
    progress.currentChunk = id(newest);
    startAhead();
    await next.started; // long since, as a rule
    if (!(await grant(newest, lanes))) takeBack(pool, lanes);
  };
  const grant = (i: number, lanes: number) =>
    getExternalWorkflowHandle(id(i))
      .signal(grantLanesSignal, lanes)
      .then(
        () => true,
        () => false,
      );
  if (pool.stopped !== null) return firstChunk;
  // Paused before its first chunk (or a run continued as new while paused): wait for the resume.
  if (pool.paused) await condition(() => !pool.paused || pool.stopped !== null);
  if (pool.stopped !== null) return firstChunk;
  const lanes = pool.freed;
  pool.freed = 0;
  start(lanes);
  try {
    await grantLanesUntilDone();
  } catch (err) {
    // Cancelled: the chunks are being cancelled too; return only once they (and their harbor runs) are done.
    if (isCancellation(err)) {
      progress.phase = 'cancelling';
      await Promise.all([...running.values()]);
    }
    throw err;
  } finally {
    pool.revokeNewest = null;
    pool.tellChunks = null;
  }
  if (failure !== null) throw failure;
  progress.runningChunks = [];
  return highestStarted() + 1;

  async function grantLanesUntilDone(): Promise<void> {
    const canGrant = () => pool.freed > 0 && pool.stopped === null && !pool.paused;
    const aheadToTell = () => pool.stopped !== null && ahead !== null && !ahead.told && running.has(ahead.index);
    // Lanes held for a spend pool's verdict keep the loop going: they may start the next chunk.
    // So do chunks left to start while paused.
    const active = () => running.size > 0 || (pool.held ?? 0) > 0 || (Boolean(pool.paused) && moreToStart());
    while (active() && failure === null) {
      await condition(
        () => failure !== null || !active() || aheadToTell() || (canGrant() && (moreToStart() || ahead !== null || !newestDrained)),
      );
      progress.runningChunks = [...running.keys()].map(id);
      if (aheadToTell()) {
        const told = ahead!;
        told.told = true;
        await told.started;
        await getExternalWorkflowHandle(id(told.index))
          .signal(spendCapReachedSignal, pool.stopped!)
          .catch(() => undefined); // it ended meanwhile
        continue;
      }
      if (failure !== null || !canGrant()) continue;
      const lanes = pool.freed;
      pool.freed = 0;
      if (!newestDrained && running.has(newest)) {
        // The newest chunk still has tasks to start: it takes the lanes (or hands back what it cannot use).
        if (!(await grant(newest, lanes))) takeBack(pool, lanes); // it just finished: the lanes go round again
      } else if (ahead !== null) {
        await promoteAhead(lanes);
      } else if (moreToStart()) {
        start(lanes);
      }
    }
  }
}
