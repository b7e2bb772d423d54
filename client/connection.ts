/** The connection to the Temporal server, and the Web UI's links: a workflow's page, the list of evaluations. */
import { Client, Connection, type WorkflowExecutionDescription, WorkflowNotFoundError } from '@temporalio/client';
import { TemporalUnreachableError } from '../model/errors';
import { connectionExtrasFromEnv } from '../infra/temporal-connection';

export async function connect(address: string, namespace: string): Promise<Client> {
  const extras = connectionExtrasFromEnv(); // bad TLS settings are a config error, not "unreachable"
  try {
    const connection = await Connection.connect({ address, connectTimeout: 5000, ...extras });
    await connection.workflowService.getSystemInfo({});
    return new Client({ connection, namespace });
  } catch (e) {
    throw new TemporalUnreachableError(
      `cannot reach the Temporal server at ${address} (${(e as Error).message.split('\n')[0]}); start one with \`vero dev\` or set temporal.address / --address`,
    );
  }
}

/** A workflow's description, or null when there is no workflow of that id. */
export async function describeIfAny(client: Client, id: string): Promise<WorkflowExecutionDescription | null> {
  try {
    return await client.workflow.getHandle(id).describe();
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return null;
    throw e;
  }
}

export function uiLink(uiBase: string | null, namespace: string, workflowId: string): string | null {
  return uiBase
    ? `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`
    : null;
}

/**
 * The evaluations and races in the Web UI's workflow list: an evaluation's chunks (evaluateChunk), a race's
 * entries (raceEntry), spend pools and builds left out. A Temporal visibility query (the UI's own filter).
 */
export const EVALUATIONS_QUERY = 'WorkflowType IN ("evaluateCandidate", "raceCandidates")';

/** The Web UI's workflow list of a namespace, filtered by a visibility query (the UI's `query` parameter). */
export function uiListLink(uiBase: string | null, namespace: string, query: string): string | null {
  return uiBase
    ? `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(query)}`
    : null;
}
