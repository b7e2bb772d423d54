/** Cancelling an evaluation (`vero cancel`, the MCP tool `cancel`): only an evaluation's workflow, never a pool's. */
import type { Client } from '@temporalio/client';
import { requireEvalId, requireEvaluationType } from './eval-id';

/** What a cancel did: requested, or nothing because the evaluation had already finished (`reason` says how). */
export interface CancelOutcome {
  evalId: string;
  cancelled: boolean;
  reason: string;
}

/** Requests cancellation of a running evaluation; refuses (ConfigError) an id that is not an evaluation's. */
export async function cancelEvaluation(client: Client, evalId: string): Promise<CancelOutcome> {
  requireEvalId(evalId, 'cancel');
  const handle = client.workflow.getHandle(evalId);
  const d = await handle.describe();
  requireEvaluationType(evalId, d.type, 'cancel');
  if (d.status.name !== 'RUNNING') return { evalId, cancelled: false, reason: `already finished (${d.status.name})` };
  await handle.cancel();
  return { evalId, cancelled: true, reason: 'cancellation requested' };
}
