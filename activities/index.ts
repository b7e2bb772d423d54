/**
 * The activities of vero-harbor. All I/O lives here; workflows reach these through proxyActivities.
 */
import { prepareCandidate } from './prepare-candidate';
import { finalizeEvaluation, saveChunkResults } from './results';
import { runTask } from './run-task';

export function createActivities() {
  return { prepareCandidate, runTask, saveChunkResults, finalizeEvaluation };
}

export type Activities = ReturnType<typeof createActivities>;
