/**
 * The rows of a finalized run of an evaluation, from Temporal alone (no host's result file): inline in its result
 * up to INLINE_TASK_LIMIT tasks; beyond, gathered as its finalize gathered them — each chunk's rows from the
 * chunk workflow's history (its saveChunkResults input), over every run the evaluation continued as new into, the
 * spend cap's `not_run` rows from the finalize input, and for a retry run the rows of the run it retried, merged.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import type { FinalizeInput } from '../model/evaluation/activity-payloads';
import { Continuation } from '../model/evaluation/input';
import { runPaths } from '../model/paths';
import { mergeRetried } from '../model/evaluation/retry';
import { notRunRow, type TaskResult } from '../model/evaluation/task-result';
import { finalizedResultOfRun } from './eval-results';

type Event = temporal.api.history.v1.IHistoryEvent;
export type RunRows = Pick<CandidateResult, 'startedAt' | 'retries'> & { tasks: TaskResult[] };

const eventsOf = async (client: Client, workflowId: string, runId: string): Promise<Event[]> =>
  (await client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];

/** The first input of each scheduled activity of `type` in `events`, decoded. */
function activityInputs<T>(client: Client, events: Event[], type: string): T[] {
  const conv = client.options.loadedDataConverter.payloadConverter;
  return events.flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    const p = a?.activityType?.name === type ? a.input?.payloads?.[0] : undefined;
    return p ? [conv.fromPayload(p) as T] : [];
  });
}

/** The histories of one run of the evaluation: `runId` and the runs it continues (continue-as-new), first first. */
async function runChain(client: Client, evalId: string, runId: string): Promise<Event[][]> {
  const chain: Event[][] = [];
  for (let id: string | null | undefined = runId; id; ) {
    const events = await eventsOf(client, evalId, id);
    chain.unshift(events);
    const started = events[0]?.workflowExecutionStartedEventAttributes;
    const carried = started?.input?.payloads?.[1];
    // A run that carries a Continuation continues the same run of the evaluation; any other starts it.
    const continues = carried && Continuation.safeParse(client.options.loadedDataConverter.payloadConverter.fromPayload(carried)).success;
    id = continues ? started?.continuedExecutionRunId : null;
  }
  return chain;
}

/** Each chunk's rows, by chunk index (a chunk run again replaces its earlier rows), of the chunks these runs started. */
async function chunkRows(client: Client, chain: Event[][]): Promise<TaskResult[]> {
  const rows = new Map<number, TaskResult[]>();
  for (const events of chain)
    for (const e of events) {
      const child = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
      if (!child?.workflowId || !child.runId) continue;
      const saved = activityInputs<{ chunkIndex: number; results: TaskResult[] }>(
        client,
        await eventsOf(client, child.workflowId, child.runId),
        'saveChunkResults',
      );
      for (const s of saved) rows.set(s.chunkIndex, s.results);
    }
  return [...rows.values()].flat();
}

/** The rows of the run `runId` of `evalId` finalized, from Temporal; null when it finalized none. */
export async function rowsOfRun(client: Client, evalId: string, runId: string): Promise<RunRows | null> {
  const finalized = await finalizedResultOfRun(client, evalId, runId);
  if (!finalized) return null;
  if (finalized.tasks) return { tasks: finalized.tasks, startedAt: finalized.startedAt, retries: finalized.retries };
  const chain = await runChain(client, evalId, runId);
  const fin = activityInputs<FinalizeInput>(client, chain[chain.length - 1]!, 'finalizeEvaluation').pop();
  if (!fin) return null;
  const tasks = await chunkRows(client, chain);
  for (const task of fin.spend?.notStarted ?? [])
    tasks.push(notRunRow(task, `not started: ${fin.spend?.reached ?? ''}`, runPaths(fin.runDir).jobsDir));
  tasks.sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
  if (!fin.retryOf) return { tasks, startedAt: finalized.startedAt, retries: finalized.retries };
  const base = await rowsOfRun(client, evalId, fin.retryOf.previousRunId);
  return (
    base && { tasks: mergeRetried(base.tasks, tasks, fin.retryOf.requestedAt), startedAt: finalized.startedAt, retries: finalized.retries }
  );
}
