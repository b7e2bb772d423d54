/** An evaluation's result: awaited through server outages, with its rows, and the best of several. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Client, ServiceError, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { type CandidateResult, rankResults } from '../model/evaluation/candidate-result';
import { homePaths } from '../model/paths';
import { readJson } from '../infra/json-file';

/** A failure that means the server could not be asked (down, restarting, unreachable), not that it said no. */
function serverOutage(e: unknown): boolean {
  if (e instanceof WorkflowFailedError || e instanceof WorkflowNotFoundError) return false;
  if (e instanceof ServiceError) return true;
  const code = (e as { code?: unknown }).code;
  return code === 14 || code === 4; // gRPC UNAVAILABLE, DEADLINE_EXCEEDED
}

/**
 * The evaluation's result, waiting through server outages: a restart of the Temporal server must not turn a
 * running (or succeeded) evaluation into "failed" for the client. `onOutage` hears about each retry.
 */
export async function awaitResult(client: Client, evalId: string, onOutage?: (message: string) => void): Promise<CandidateResult> {
  for (let waitMs = 1_000; ; waitMs = Math.min(waitMs * 2, 30_000)) {
    try {
      return (await client.workflow.getHandle(evalId).result()) as CandidateResult;
    } catch (e) {
      if (!serverOutage(e)) throw e;
      onOutage?.(`waiting for the Temporal server (${(e as Error).message.split('\n')[0]}); asking again in ${waitMs / 1000}s`);
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}

/** The full result: the per-task rows come from the result file when the payload left them out (large evaluations). */
export function withTasks(r: CandidateResult): CandidateResult {
  if (r.tasks || !fs.existsSync(r.resultFile)) return r;
  return { ...r, tasks: (JSON.parse(fs.readFileSync(r.resultFile, 'utf8')) as CandidateResult).tasks };
}

/** The result files under a home (unreadable ones skipped: a file being written, or not a result). */
export function homeResults(home: string): CandidateResult[] {
  const dir = homePaths(home).resultsDir;
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const r = readJson<unknown>(path.join(dir, name));
    return r !== null && typeof r === 'object' ? [r as CandidateResult] : [];
  });
}

/** The best completed evaluation (not a spend cap's partial one), by the one ranking (model/evaluation/candidate-result.ts). */
export function pickBest(results: CandidateResult[]): CandidateResult | null {
  return rankResults(results)[0] ?? null;
}

/**
 * The result a run of an evaluation finalized, from its history in Temporal (so no host's file is needed): the
 * last `finalizeEvaluation` it completed (a run that continued as new into a queued retry finalized first), or
 * null when it finalized none. Its rows are inline up to INLINE_TASK_LIMIT tasks (null beyond).
 */
export async function finalizedResultOfRun(client: Client, evalId: string, runId: string): Promise<CandidateResult | null> {
  const history = await client.workflow.getHandle(evalId, runId).fetchHistory();
  const finalizes = new Set<string>();
  let last: CandidateResult | null = null;
  for (const e of history.events ?? []) {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'finalizeEvaluation') finalizes.add(String(e.eventId));
    const done = e.activityTaskCompletedEventAttributes;
    const payload = done?.result?.payloads?.[0];
    if (done && payload && finalizes.has(String(done.scheduledEventId)))
      last = client.options.loadedDataConverter.payloadConverter.fromPayload(payload);
  }
  return last;
}
