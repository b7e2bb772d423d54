/**
 * Pause and resume (`vero pause`, `vero resume`): Temporal updates on the evaluation, validated and recorded in
 * its history (patched 'pause-resume'). While paused the lane pool grants no lane and starts no chunk
 * (workflows/lane-grants.ts), and every running chunk is told (`pauseChunk`): its lanes start no task; the
 * running ones finish, or with `stopRunning` are cancelled (their harbors stopped, their job dirs kept) and run
 * again on resume, their jobs resumed. `resumeChunk` lets the lanes go on. The state is in the history, so a
 * crashed worker or server changes nothing; a run that continues as new carries it (Continuation.paused).
 */
import {
  defineSignal,
  defineUpdate,
  patched,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Progress } from '../model/evaluation/progress';
import type { PauseChange, PauseState } from '../model/evaluation/pause-state';
import { veroStatus } from '../model/evaluation/search-attributes';

export const PAUSE_PATCH = 'pause-resume';
/**
 * A task a pause stopped runs again on resume also when its attempt did not end cancelled (its worker died while
 * the cancellation was asked for: the attempt timed out); histories before: an error row (workflows/chunk-lanes.ts).
 */
export const REQUEUE_STOPPED_PATCH = 'requeue-stopped-attempts';

/** Pauses an evaluation; `stopRunning`: also stop the tasks running now (they run again on resume). */
export const pauseUpdate = defineUpdate<PauseChange, [{ stopRunning?: boolean }]>('pause');
/** Resumes a paused evaluation: lanes are granted again and paused chunks go on. */
export const resumeUpdate = defineUpdate<PauseChange, []>('resume');

/** The parent to each running chunk. */
export const pauseChunkSignal = defineSignal<[{ stopRunning: boolean }]>('pauseChunk');
export const resumeChunkSignal = defineSignal('resumeChunk');

const changeOf = (state: PauseState | null, changed: boolean): PauseChange => ({
  paused: state !== null,
  since: state?.since ?? null,
  stopRunning: state?.stopRunning ?? false,
  changed,
});

/** What pausing needs of the parent's lane pool (workflows/lane-grants.ts LanePool). */
interface PausableLanes {
  concurrency: number;
  paused?: PauseState | null;
  tellChunks?: ((pause: { stopRunning: boolean } | null) => Promise<void>) | null;
}

/** What the parent's handlers need: its lane pool, its progress, and why it refuses (null: it does not). */
export interface Pausable {
  lanes: PausableLanes;
  progress: Progress;
  refusal: () => string | null;
}

/** Applies a carried pause (a run that continued as new while paused): no command, the pool starts paused. */
export function carryPause(run: Omit<Pausable, 'refusal'>, carried: PauseState | undefined): void {
  if (!carried) return;
  run.lanes.paused = carried;
  run.progress.paused = carried;
  setCurrentDetails(`paused since ${carried.since}: vero resume ${workflowInfo().workflowId}`);
}

/** Registers the pause and resume updates of an evaluation. */
export function handlePauseAndResume(run: Pausable): void {
  const validator = () => {
    const why = run.refusal();
    if (why !== null) throw new Error(why);
  };
  setHandler(
    pauseUpdate,
    async ({ stopRunning = false }) => {
      const was = run.lanes.paused ?? null;
      if (!patched(PAUSE_PATCH) || (was && (was.stopRunning || !stopRunning))) return changeOf(was, false);
      // eslint-disable-next-line no-restricted-globals -- the workflow clock (the time of this update's task), replay-safe
      const since = was?.since ?? new Date().toISOString();
      const state: PauseState = { since, stopRunning: was?.stopRunning || stopRunning };
      run.lanes.paused = state;
      run.progress.paused = state;
      upsertSearchAttributes([veroStatus('paused')]);
      setCurrentDetails(
        `paused since ${state.since}${state.stopRunning ? ' (running tasks stopped)' : ''}: vero resume ${workflowInfo().workflowId}`,
      );
      await run.lanes.tellChunks?.({ stopRunning: state.stopRunning });
      return changeOf(state, true);
    },
    { validator: (_options: { stopRunning?: boolean }) => validator() },
  );
  setHandler(
    resumeUpdate,
    async () => {
      if (!patched(PAUSE_PATCH) || !run.lanes.paused) return changeOf(null, false);
      run.lanes.paused = null;
      delete run.progress.paused;
      upsertSearchAttributes([veroStatus('running')]);
      setCurrentDetails(`concurrency ${run.lanes.concurrency} (resumed)`);
      await run.lanes.tellChunks?.(null);
      return changeOf(null, true);
    },
    { validator },
  );
}
