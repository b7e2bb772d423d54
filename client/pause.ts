/**
 * Pause and resume an evaluation (`vero pause`, `vero resume`, the MCP tools of the same names): Temporal
 * updates on its workflow, validated by it and recorded in its history (workflows/pause.ts).
 */
import type { Client } from '@temporalio/client';
import { ConfigError } from '../model/errors';
import type { PauseChange } from '../model/evaluation/pause-state';
import type { evaluateCandidate } from '../workflows';
import { requireEvalId, requireEvaluationType } from './eval-id';
import { requireWorker, withinAcceptBound } from './worker-wait';
import { pauseUpdate, resumeUpdate } from '../workflows/pause';

/** What pausing or resuming one evaluation did: the state now, and whether this call changed it. */
export interface PauseOutcome extends PauseChange {
  evalId: string;
}

async function update(client: Client, evalId: string, verb: 'paused' | 'resumed', call: () => Promise<PauseChange>): Promise<PauseOutcome> {
  const what = verb === 'paused' ? 'pause' : 'resume';
  requireEvalId(evalId, what);
  const handle = client.workflow.getHandle<typeof evaluateCandidate>(evalId);
  const d = await handle.describe();
  requireEvaluationType(evalId, d.type, what);
  if (d.status.name !== 'RUNNING') throw new ConfigError(`${evalId} has finished (${d.status.name}); it cannot be ${verb}`);
  await requireWorker(client, d.taskQueue, what);
  return { evalId, ...(await withinAcceptBound(client, what, evalId, call)) };
}

/**
 * Pauses a running evaluation: once this resolves no task starts until it is resumed. The tasks running finish,
 * or with `stopRunning` are stopped now (their harbors stopped, the trials that finished kept) and run again, their
 * jobs resumed, on resume. Pausing a paused evaluation changes nothing (unless it adds `stopRunning`).
 */
export function pauseEvaluation(client: Client, evalId: string, opts: { stopRunning?: boolean } = {}): Promise<PauseOutcome> {
  const handle = client.workflow.getHandle<typeof evaluateCandidate>(evalId);
  return update(client, evalId, 'paused', () => handle.executeUpdate(pauseUpdate, { args: [{ stopRunning: opts.stopRunning ?? false }] }));
}

/** Resumes a paused evaluation: its lanes start tasks again (first those a pause stopped). */
export function resumeEvaluation(client: Client, evalId: string): Promise<PauseOutcome> {
  const handle = client.workflow.getHandle<typeof evaluateCandidate>(evalId);
  return update(client, evalId, 'resumed', () => handle.executeUpdate(resumeUpdate));
}
