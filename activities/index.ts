/**
 * The activities of vero-harbor. All I/O lives here; workflows reach these through proxyActivities.
 */
import { compileTaskDir } from './compile-task';
import { runModeA } from './mode-a';
import { preflightHarbor } from './preflight';
import { prepareCandidate } from './prepare-candidate';
import { finalizeEvaluation, saveChunkResults } from './results';
import { runTask } from './run-task';

export function createActivities() {
  return { prepareCandidate, preflightHarbor, runTask, runModeA, saveChunkResults, finalizeEvaluation, compileTaskDir };
}

export type Activities = ReturnType<typeof createActivities>;
