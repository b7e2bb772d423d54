/**
 * The progress of an evaluation while a `vero retry` of it runs: the retry's run runs only the retried tasks, so
 * its own counts are theirs; the evaluation's are the previous result's rows that are not run again (finished)
 * plus the retried tasks' progress. The previous rows come from Temporal (client/run-rows.ts) when this host has
 * no result file.
 */
import type { Client } from '@temporalio/client';
import { EvalInput } from '../model/evaluation/input';
import { addCounts, countFinished, newProgress, type Progress } from '../model/evaluation/progress';
import type { TaskResult } from '../model/evaluation/task-result';
import { finalizedResultOfRun, withTasks } from './eval-results';
import { rowsOfRun } from './run-rows';

/** The input of the evaluation's current run: the first event of its history, fetched alone. */
async function currentRunInput(client: Client, evalId: string): Promise<EvalInput | null> {
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId: evalId },
    maximumPageSize: 1,
  });
  const payload = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const parsed = EvalInput.safeParse(payload ? client.options.loadedDataConverter.payloadConverter.fromPayload(payload) : undefined);
  return parsed.success ? parsed.data : null;
}

/** The rows a finished run finalized: inline, its result file on this host, else gathered from Temporal. */
async function rowsOf(client: Client, evalId: string, runId: string): Promise<TaskResult[] | null> {
  const finalized = await finalizedResultOfRun(client, evalId, runId);
  if (!finalized) return null;
  return withTasks(finalized).tasks ?? (await rowsOfRun(client, evalId, runId))?.tasks ?? null;
}

/** Finished runs' rows do not change: each is read once per process (a failed or empty read is tried again next time). */
const previousRows = new Map<string, Promise<TaskResult[] | null>>();
function previousRowsOf(client: Client, evalId: string, runId: string): Promise<TaskResult[] | null> {
  const key = `${evalId}\0${runId}`;
  if (!previousRows.has(key)) {
    const read = rowsOf(client, evalId, runId).catch(() => null);
    previousRows.set(key, read);
    void read.then((rows) => rows ?? previousRows.delete(key));
  }
  return previousRows.get(key)!;
}

/**
 * `retried`'s progress (a retry run's: only the tasks it runs again) as the evaluation's: the previous result's
 * other rows counted as finished, the total every task.
 */
function withPreviousRows(retried: Progress, tasks: string[], rows: readonly TaskResult[]): Progress {
  const again = new Set(tasks);
  const kept = newProgress(0, retried.phase);
  for (const row of rows) if (!again.has(row.task)) countFinished(kept, row);
  return addCounts({ ...retried, total: rows.length }, kept);
}

/** The evaluation's progress, given its current run's (`p`): a retry's run adds the rows it does not run again. */
export async function evaluationProgress(client: Client, evalId: string, p: Progress): Promise<Progress> {
  if (p.phase === 'done') return p; // a finished retry's counts are already the whole result's
  const input = await currentRunInput(client, evalId).catch(() => null);
  if (!input?.retryOf) return p;
  const rows = await previousRowsOf(client, evalId, input.retryOf.previousRunId);
  return rows ? withPreviousRows(p, input.tasks, rows) : p;
}
