/**
 * The activities of vero-harbor: the workflows' only way to I/O (through proxyActivities), each a thin wrapper
 * over infra/'s helpers.
 */
import { compileTaskDir } from './compile-task';
import { runModeA } from './mode-a';
import { preflightHarbor } from './preflight';
import { prepareCandidate } from './prepare-candidate';
import { finalizeEvaluation, saveChunkResults } from './results';
import { runTask, type RunTaskInput } from './run-task';
import type { Deployment } from '../infra/deployment';
import type { TaskResult } from '../model/evaluation/task-result';

/** `deployment`: the worker's (infra/deployment.ts), recorded with each harbor group it starts. */
export function createActivities(deployment?: Deployment) {
  return {
    prepareCandidate,
    preflightHarbor,
    runTask: (input: RunTaskInput): Promise<TaskResult> => runTask(input, deployment),
    runModeA,
    saveChunkResults,
    finalizeEvaluation,
    compileTaskDir,
  };
}

export type Activities = ReturnType<typeof createActivities>;
