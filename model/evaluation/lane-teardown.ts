/**
 * A lane is for work, not for Harbor's teardown. Once a task's harbor has done its work (every trial passed its
 * verifier: harbor/work-done.ts), its activity tells its chunk (the `taskWorkDone` signal) and the chunk's lane
 * may start the next task while that harbor tears down. At most `teardownConcurrency` tasks of a chunk tear down
 * at once (absent: the evaluation's concurrency; 0: a task keeps its lane until its harbor exits). The task's row
 * is still read from Harbor's result.json when its harbor exits. Pure.
 */
import type { EvalSettings } from './input';

/** The signal's name, as the activity sends it with the worker's client. */
export const TASK_WORK_DONE_SIGNAL = 'taskWorkDone';

/** What the activity says: the task whose harbor has done its work. */
export interface TaskWorkDone {
  task: string;
}

/** How many tasks of a chunk may tear down at once. */
export function teardownBound(s: Pick<EvalSettings, 'concurrency' | 'teardownConcurrency'>): number {
  return s.teardownConcurrency ?? s.concurrency;
}

/** Whether a task whose harbor has done its work gives its lane up now, with `tearingDown` tasks tearing down. */
export function releasesLane(s: Pick<EvalSettings, 'concurrency' | 'teardownConcurrency'>, tearingDown: number): boolean {
  return tearingDown < teardownBound(s);
}
