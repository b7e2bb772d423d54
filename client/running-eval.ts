/** A running evaluation: its progress, its concurrency, and why it may not be moving. */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { addCounts, type Progress } from '../model/evaluation/progress';
import { ConfigError } from '../model/errors';
import { Continuation, EvalInput } from '../model/evaluation/input';
import { finalizedResultOfRun } from './eval-results';
import { evaluationProgress } from './retry-progress';
import { requireEvalId } from './eval-id';
import { requireWorker, withinAcceptBound } from './worker-wait';
import { type evaluateCandidate, progressQuery, setConcurrencyUpdate, type ConcurrencyChange } from '../workflows';

/**
 * Progress of an evaluation: the parent's counts (finished chunks) plus those of its running chunks; while a
 * `vero retry` runs, the previous result's rows it does not run again too (client/retry-progress.ts).
 */
export async function getProgress(client: Client, evalId: string): Promise<Progress> {
  const p = await client.workflow.getHandle(evalId).query(progressQuery);
  const chunks = p.runningChunks ?? (p.currentChunk ? [p.currentChunk] : []);
  const total = { ...p, running: chunks.length ? 0 : p.running, ...(chunks.length ? { tearingDown: 0 } : {}) };
  for (const id of chunks) {
    try {
      addCounts(total, await client.workflow.getHandle(id).query(progressQuery));
    } catch {
      /* the chunk is starting or just finished */
    }
  }
  return evaluationProgress(client, evalId, total);
}

/** An evaluation's progress, or null when no worker could answer within `timeoutMs` (none polls, or it is busy). */
export async function progressIfAnswered(client: Client, evalId: string, timeoutMs = 10_000): Promise<Progress | null> {
  try {
    return await client.connection.withDeadline(Date.now() + timeoutMs, () => getProgress(client, evalId));
  } catch {
    return null;
  }
}

/**
 * Changes the concurrency of a running evaluation (a Temporal update, validated by the workflow and recorded in
 * its history). Resolves once the new value is in force: after lowering, no task starts until fewer than
 * `concurrency` run. Throws ConfigError when the workflow refuses (finished, started before lane grants).
 */
export async function setConcurrency(client: Client, evalId: string, concurrency: number): Promise<ConcurrencyChange> {
  const handle = client.workflow.getHandle<typeof evaluateCandidate>(requireEvalId(evalId, 'set-concurrency'));
  const d = await handle.describe();
  if (d.status.name !== 'RUNNING') throw new ConfigError(`${evalId} has finished (${d.status.name}); its concurrency cannot change`);
  await requireWorker(client, d.taskQueue, 'set-concurrency');
  return withinAcceptBound(client, 'set-concurrency', evalId, () => handle.executeUpdate(setConcurrencyUpdate, { args: [concurrency] }));
}

/**
 * Why a running evaluation may not be moving, from what Temporal knows: each of its activities that is being
 * retried after a failure (the preflight's reason when Docker is down, say), with its attempt and last failure.
 */
export function retryingActivities(d: WorkflowExecutionDescription): string[] {
  return (d.raw.pendingActivities ?? []).flatMap((a) => {
    const message = a.lastFailure?.message?.split('\n')[0];
    return message ? [`${a.activityType?.name ?? 'an activity'} is retrying (attempt ${a.attempt ?? '?'}): ${message}`] : [];
  });
}

/**
 * When the evaluation started, which its current run's start is not after a continue-as-new (the continuation
 * carries it) or a `vero retry` (the previous run's result has it); null: the current run's start is it.
 */
export async function evaluationStartedAt(client: Client, evalId: string, runId: string): Promise<string | null> {
  const history = await client.workflow.getHandle(evalId, runId).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const [input, continuation] = payloads.map((p) => client.options.loadedDataConverter.payloadConverter.fromPayload(p));
  const carried = Continuation.safeParse(continuation);
  if (carried.success) return carried.data.startedAt;
  const parsed = EvalInput.safeParse(input);
  const retryOf = parsed.success ? parsed.data.retryOf : undefined;
  return retryOf ? ((await finalizedResultOfRun(client, evalId, retryOf.previousRunId))?.startedAt ?? null) : null;
}
