import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { Progress } from '../model/eval-types';

/** Progress of an evaluation (parent) or of one chunk (child). */
export const progressQuery = defineQuery<Progress>('progress');

/**
 * Lane hand-over between chunk workflows (the `lane-grants` protocol): a chunk whose queue is empty frees each
 * lane as it finishes (`lanesFreed` to the parent); the parent hands freed lanes to the newest chunk that still
 * has tasks (`grantLanes` to it), or starts the next chunk with them. At most `concurrency` tasks are ever in
 * flight, and no lane waits for a chunk's slowest task.
 */
export const lanesFreedSignal = defineSignal<[{ chunkIndex: number; lanes: number }]>('lanesFreed');
export const grantLanesSignal = defineSignal<[number]>('grantLanes');
