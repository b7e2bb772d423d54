/**
 * A chunk of tasks of one evaluation, as a child workflow so each history stays small at 5,000 tasks.
 * Runs its lanes (chunk-lanes.ts), each taking the next task and running it as one activity, and saves the rows.
 */
import { patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ChunkInput, ChunkSummary } from '../model/evaluation/chunk-payloads';
import { newProgress } from '../model/evaluation/progress';
import { ChunkLanes } from './chunk-lanes';
import { ChunkSpendStop } from './chunk-spend-stop';
import { progressQuery } from './queries';
import { taskActivities } from './activity-policy';

export async function evaluateChunk(input: ChunkInput): Promise<ChunkSummary> {
  const s = input.settings;
  const { runTask, saveChunkResults } = taskActivities(s);
  const progress = newProgress(input.tasks.length, 'running');
  setHandler(progressQuery, () => progress);
  // Spend caps (model/evaluation/spend-cap.ts): each finished task's spend goes to the parent, which says when to stop.
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
