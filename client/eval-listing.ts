/** The evaluations Temporal's visibility lists, one row each. */
import type { Client } from '@temporalio/client';
import { VeroCandidate, VeroCostUsd, VeroScore, VeroStatus } from '../model/evaluation/search-attributes';

export interface EvalListing {
  evalId: string;
  candidate: string | null;
  /** The ref the candidate was started as (a tag, a branch, HEAD), when its start recorded it. */
  candidateRef: string | null;
  /** The evaluation's status (VeroStatus): queued, running, completed, failed, budget_exhausted, error, cancelled. */
  status: string;
  score: number | null;
  /** Harbor's cost_usd summed over the evaluation's trials, when any trial reported it. */
  costUsd: number | null;
  workflowStatus: string;
  startedAt: Date;
  /** When the workflow closed (null while it runs). */
  finishedAt: Date | null;
}

/**
 * Every evaluation (paged through visibility, 200 at a time), or the first `limit`, newest first; `configDigest`
 * keeps only those evaluated the same way (comparable scores).
 */
export async function listEvaluations(client: Client, opts: { limit?: number; configDigest?: string } = {}): Promise<EvalListing[]> {
  const limit = opts.limit ?? Infinity;
  const out: EvalListing[] = [];
  const digestFilter = opts.configDigest ? ` AND VeroConfigDigest = '${opts.configDigest.replace(/[^0-9a-f]/g, '')}'` : '';
  // A large evaluation continues as new every few hundred chunks: list each once, by its current run.
  const query = `WorkflowType = 'evaluateCandidate' AND ExecutionStatus != 'ContinuedAsNew'${digestFilter}`;
  // One row per evaluation: an id re-run (--force) or reset has more than one closed run; the newest is listed.
  const seen = new Set<string>();
  for await (const w of client.workflow.list({ query, pageSize: 200 })) {
    if (seen.has(w.workflowId)) continue;
    seen.add(w.workflowId);
    const sa = w.typedSearchAttributes;
    out.push({
      evalId: w.workflowId,
      candidate: sa.get(VeroCandidate) ?? null,
      candidateRef: typeof w.memo?.candidateRef === 'string' ? w.memo.candidateRef : null,
      status: sa.get(VeroStatus) ?? w.status.name.toLowerCase(),
      score: sa.get(VeroScore) ?? null,
      costUsd: sa.get(VeroCostUsd) ?? null,
      workflowStatus: w.status.name,
      startedAt: w.startTime,
      finishedAt: w.closeTime ?? null,
    });
    if (out.length >= limit) break;
  }
  return out;
}
