/**
 * The progress of an evaluation while a `vero retry` of it runs: the retry's run runs only the retried tasks, so
 * its own counts are theirs; the evaluation's are the previous result's rows that are not run again (finished)
 * plus the retried tasks' progress. The previous result comes from Temporal (the previous run's history), so no
 * host's file is needed while its rows are inline.
 */
import type { Client } from '@temporalio/client';
import type { CandidateResult } from '../model/candidate-result';
import { EvalInput } from '../model/eval-input';
import { addCounts, countFinished, newProgress, type Progress } from '../model/progress';
import { finalizedResultOfRun, withTasks } from './eval-results';

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

/** Finished runs' results do not change: each is read from its history once per process. */
const previousResults = new Map<string, Promise<CandidateResult | null>>();
function previousResult(client: Client, evalId: string, runId: string): Promise<CandidateResult | null> {
  const key = `${evalId}\0${runId}`;
  if (!previousResults.has(key))
    previousResults.set(
      key,
      finalizedResultOfRun(client, evalId, runId).catch(() => null),
    );
  return previousResults.get(key)!;
}

/**
 * `retried`'s progress (a retry run's: only the tasks it runs again) as the evaluation's: the previous result's
 * other rows counted as finished, the total every task. Unchanged when the previous rows cannot be read (not
 * inline and the result file not on this host).
 */
export function withPreviousRows(retried: Progress, tasks: string[], previous: CandidateResult): Progress {
  const rows = withTasks(previous).tasks;
  if (!rows) return retried;
  const again = new Set(tasks);
  const kept = newProgress(0, retried.phase);
  for (const row of rows) if (!again.has(row.task)) countFinished(kept, row);
  return addCounts({ ...retried, total: previous.nTasks }, kept);
}

/** The evaluation's progress, given its current run's (`p`): a retry's run adds the rows it does not run again. */
export async function evaluationProgress(client: Client, evalId: string, p: Progress): Promise<Progress> {
  if (p.phase === 'done') return p; // a finished retry's counts are already the whole result's
  const input = await currentRunInput(client, evalId).catch(() => null);
  if (!input?.retryOf) return p;
  const previous = await previousResult(client, evalId, input.retryOf.previousRunId);
  return previous ? withPreviousRows(p, input.tasks, previous) : p;
}
