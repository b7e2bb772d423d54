/**
 * The rows so far of an evaluation that has not completed (running, cancelled, failed): its tasks' job dirs on
 * this host, collated as `vero trials` does. Tasks without a job dir yet are pending. Rows on another worker's
 * host are not seen here (then they count as pending).
 */
import * as fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { collate, collatedRow, type LoadedJobs, loadTrials } from '../harbor/collate';
import type { CollatedRow } from '../model/evaluation/task-result';
import { EvalInput } from '../model/evaluation/input';
import { jobNameFor } from '../model/harbor/job-name';
import { homePaths, runPaths } from '../model/paths';

export interface PartialResults {
  workflowStatus: string;
  partial: true;
  nTasks: number;
  /** Tasks with a row (scored or error) so far. */
  nWithResults: number;
  /** Each with its job dir on this host (its trials and harbor log are there). */
  tasks: CollatedRow[];
  pending: string[];
}

/**
 * Of a running evaluation, the trials a pause (`--stop-running`) or a cancel stopped (Harbor's CancelledError) are
 * not results: the task runs again on resume, its job resumed without them. Its row is pending, not an error.
 */
function withoutStoppedTrials(loaded: LoadedJobs, workflowStatus: string): LoadedJobs {
  if (workflowStatus !== 'RUNNING') return loaded;
  return { ...loaded, trials: loaded.trials.filter((t) => t.result.exception_info?.exception_type !== 'CancelledError') };
}

export async function partialResults(client: Client, evalId: string): Promise<PartialResults> {
  const handle = client.workflow.getHandle(evalId);
  const d = await handle.describe();
  const history = await handle.fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const input = EvalInput.parse(payload ? defaultPayloadConverter.fromPayload(payload) : null);
  // The run dir is the first run's, also after the evaluation continued as new (workflows/evaluate-candidate.ts).
  const firstRunId = d.raw.workflowExecutionInfo?.firstRunId || d.runId;
  const run = runPaths(homePaths(input.home).runDir(input.evalId, firstRunId));
  const tasks: PartialResults['tasks'] = [];
  const pending: string[] = [];
  for (const task of input.tasks) {
    const jobDir = run.job(jobNameFor(task)).dir;
    const loaded = fs.existsSync(jobDir) ? withoutStoppedTrials(loadTrials(jobDir), d.status.name) : null;
    const opts = {
      requested: [task],
      rewardKey: input.settings.rewardKey,
      aggregate: input.settings.aggregate,
      invalid: loaded?.invalid ?? [],
    };
    let row: PartialResults['tasks'][number] | undefined;
    try {
      const collated = loaded && (loaded.trials.length || loaded.invalid.length) ? collate(loaded.trials, opts)[0] : undefined;
      row = collated && collatedRow(collated, jobDir);
    } catch {
      row = undefined; // trials for another task name: the run's own row will say so
    }
    if (row) tasks.push(row);
    else pending.push(task);
  }
  return { workflowStatus: d.status.name, partial: true, nTasks: input.tasks.length, nWithResults: tasks.length, tasks, pending };
}
