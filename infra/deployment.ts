/**
 * Which deployment a worker belongs to, for state it shares with other workers on its host (the record of
 * harbor process groups): the Temporal namespace's id — a UUID the server made when it created the namespace,
 * so two servers' `default` namespaces differ — and the task queue. A group is acted on only by a reaper of
 * the same deployment; for any other, "not found on my server" means "not mine", never "stop it".
 */
import type { WorkflowService } from '@temporalio/client';
import { InfrastructureError } from '../model/errors';

export interface Deployment {
  namespace: string;
  namespaceId: string;
  taskQueue: string;
}

/** The deployment of a worker or reaper on `namespace` / `taskQueue` of the server behind `service`. */
export async function deploymentOf(service: WorkflowService, namespace: string, taskQueue: string): Promise<Deployment> {
  const r = await service.describeNamespace({ namespace });
  const namespaceId = r.namespaceInfo?.id;
  if (!namespaceId) throw new InfrastructureError(`the Temporal server did not tell the id of namespace "${namespace}"`);
  return { namespace, namespaceId, taskQueue };
}

export const sameDeployment = (a: Deployment | undefined | null, b: Deployment): boolean =>
  !!a && a.namespaceId === b.namespaceId && a.namespace === b.namespace && a.taskQueue === b.taskQueue;
