/** The signals and the update of the lane protocol (workflows/lane-grants.ts, chunk-lanes.ts) and of `vero set-concurrency`. */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChunkProgressReport } from '../model/evaluation/progress-details';
import { TASK_WORK_DONE_SIGNAL, type TaskWorkDone } from '../model/evaluation/lane-teardown';

/**
 * Lane hand-over between chunk workflows (the `lane-grants` protocol, workflows/lane-grants.ts): a chunk whose
 * queue is empty frees each lane as it finishes (`lanesFreed` to the parent, `drained` absent or true); the
 * parent hands freed lanes to the newest chunk that still has tasks (`grantLanes` to it), or starts the next
 * chunk with them. At most `concurrency` tasks are ever running (beside them, tasks whose harbors tear down after
 * their work: workflows/chunk-teardowns.ts), and no lane waits for a chunk's slowest task.
 * `revokeLanes` asks a chunk to hand back every lane it holds after its current task (`drained: false`).
 * A spend-capped chunk's lane that frees after a task carries that task's spend (`spent`), so the parent meters
 * it before it can start anything with the lane (two signals may arrive in either order); in a spend pool the lane
 * is held until the pool's verdict on that spend is back.
 */
export interface LanesFreed {
  chunkIndex: number;
  lanes: number;
  drained?: boolean;
  /** The last task's spend: its total, with its name (patched 'reset-safe-chunks'; workflows/spend-meter.ts). */
  spent?: { costUsd: number; tokens: number; unmetered: number; task?: string };
  /**
   * The sending chunk's run (patched 'reset-safe-chunks'): the parent takes lanes back only from the chunks it
   * started itself, not from a chunk of a run that a reset replaced (or its signals the reset applied again).
   */
  chunkRunId?: string;
}
export const lanesFreedSignal = defineSignal<[LanesFreed]>('lanesFreed');
export const grantLanesSignal = defineSignal<[number]>('grantLanes');
export const revokeLanesSignal = defineSignal('revokeLanes');
/** A chunk's counts so far, sent to the parent as its tasks finish (ChunkInput.reportProgress): the Web UI's details. */
export const chunkProgressSignal = defineSignal<[ChunkProgressReport]>('chunkProgress');

/** What `vero set-concurrency` returns: the value before and the one in force now. */
export interface ConcurrencyChange {
  previous: number;
  concurrency: number;
}

/**
 * Changes the concurrency of a running evaluation (validated; recorded in its history). Raising starts tasks
 * at once; lowering lets running tasks finish and starts none until fewer than the new value run.
 */
export const setConcurrencyUpdate = defineUpdate<ConcurrencyChange, [number]>('setConcurrency');

/**
 * A task's activity says its harbor has done its work (every trial passed its verifier) and is tearing down: the
 * chunk's lane may start the next task meanwhile (workflows/chunk-teardowns.ts, model/evaluation/lane-teardown.ts).
 */
export const taskWorkDoneSignal = defineSignal<[TaskWorkDone]>(TASK_WORK_DONE_SIGNAL);
