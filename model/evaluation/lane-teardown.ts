/**
 * A lane is for work, not for Harbor's teardown. Once a task's harbor has done its work (every trial passed its
 * verifier: harbor/work-done.ts), its activity tells its chunk (the `taskWorkDone` signal) and the chunk's lane
 * may start the next task while that harbor tears down. At most `teardownConcurrency` tasks of a chunk tear down
 * at once (absent: twice the evaluation's concurrency, or the concurrency in chunks started before that default,
 * patched 'teardown-bound-twice-concurrency'; 0: a task keeps its lane until its harbor exits). The task's row is
 * still read from Harbor's result.json when its harbor exits. Pure.
 */
import type { EvalSettings } from './input';

/** The signal's name, as the activity sends it with the worker's client. */
export const TASK_WORK_DONE_SIGNAL = 'taskWorkDone';

/** What the activity says: the task whose harbor has done its work. */
export interface TaskWorkDone {
  task: string;
}

/**
 * Lanes per task tearing down when `teardownConcurrency` is absent: 2 (a Docker teardown, ≈ 10 s, outlasts a short
 * task's whole work, so a bound of the concurrency kept freed lanes waiting: docs/benchmarks.md); 1 in chunks
 * started before (`twice` false), so their histories replay.
 */
export const DEFAULT_TEARDOWNS_PER_LANE = 2;

/** How many tasks of a chunk may tear down at once; `twice`: the default of chunks started since it is 2 × concurrency. */
export function teardownBound(s: Pick<EvalSettings, 'concurrency' | 'teardownConcurrency'>, twice: boolean): number {
  return s.teardownConcurrency ?? (twice ? DEFAULT_TEARDOWNS_PER_LANE : 1) * s.concurrency;
}

/** Whether a task whose harbor has done its work gives its lane up now, with `tearingDown` tasks tearing down. */
export function releasesLane(s: Pick<EvalSettings, 'concurrency' | 'teardownConcurrency'>, tearingDown: number, twice: boolean): boolean {
  return tearingDown < teardownBound(s, twice);
}
