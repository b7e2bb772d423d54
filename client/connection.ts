/** The connection to the Temporal server, and the Web UI's link to a workflow. */
import { Client, Connection } from '@temporalio/client';
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

export function uiLink(uiBase: string | null, namespace: string, workflowId: string): string | null {
  return uiBase
    ? `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`
    : null;
}
