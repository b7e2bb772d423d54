/**
 * A chunk of tasks of one evaluation, as a child workflow so each history stays small at 5,000 tasks.
 * Runs its lanes (chunk-lanes.ts), each taking the next task and running it as one activity, and saves the rows.
 */
import { ActivityCancellationType, patched, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ChunkInput, ChunkSummary } from '../model/chunk-payloads';
import type { EvalSettings } from '../model/eval-input';
import { newProgress } from '../model/progress';
import { CONFIG_FAILURES } from '../model/failures';
import { ChunkLanes } from './chunk-lanes';
import { ChunkSpendStop } from './chunk-spend-stop';
import { progressQuery } from './queries';

/** Activity attempts beyond `task_attempts` for a task whose worker died (heartbeat timeouts). */
const WORKER_CRASH_ALLOWANCE = 10;

function chunkActivities(s: EvalSettings) {
  return proxyActivities<Activities>({
    // runTask enforces the task timeout itself (and salvages finished trials); this is the backstop.
    startToCloseTimeout: `${Math.ceil(s.taskTimeoutSec + 120)}s`,
    heartbeatTimeout: `${s.heartbeatTimeoutSec}s`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      // runTask counts Harbor's failures itself (carried in its heartbeat details) against task_attempts; the
      // extra attempts absorb crashes of our own workers, which must not use up a task's attempts.
      maximumAttempts: s.taskAttempts + WORKER_CRASH_ALLOWANCE,
      initialInterval: '2s',
      backoffCoefficient: 2,
      maximumInterval: '2m',
      nonRetryableErrorTypes: CONFIG_FAILURES,
    },
  });
}

export async function evaluateChunk(input: ChunkInput): Promise<ChunkSummary> {
  const s = input.settings;
  const { runTask, saveChunkResults } = chunkActivities(s);
  const progress = newProgress(input.tasks.length, 'running');
  setHandler(progressQuery, () => progress);
  // Spend caps (model/spend-cap.ts): each finished task's spend goes to the parent, which says when to stop.
  const metered = s.spendCap !== undefined && workflowInfo().parent !== undefined && patched('spend-cap');
  // A lane starts its next task only after the cap check its last task's spend fed (histories before: at once).
  const spendStop = metered
    ? new ChunkSpendStop(s.spendCap?.graceSec, progress, input.lanes !== undefined && patched('spend-verdict-before-next-task'))
    : null;
  const lanes = new ChunkLanes(input, runTask, progress, spendStop);
  await lanes.run();
  lanes.markNotStarted();
  progress.phase = 'done';
  const results = lanes.results;
  const summary = await saveChunkResults({ runDir: input.runDir, chunkIndex: input.chunkIndex, results });
  return input.returnRows === false ? summary : { ...summary, results };
}
