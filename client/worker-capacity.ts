/** The workers polling a task queue: how many, and how many harbor runs they can run at once. */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { parseWorkerIdentity } from '../model/worker-identity';

/** How many workers poll a task queue for workflow tasks (a query or a new step needs one). */
export async function workflowPollers(client: Client, taskQueue: string): Promise<number> {
  const r = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return new Set((r.pollers ?? []).map((p) => p.identity ?? '')).size;
}

export interface QueueCapacity {
  /** Distinct workers polling the queue for activities (Temporal keeps a poller listed for a few minutes). */
  workers: number;
  /** Their activity slots summed; null when a worker's identity does not say (not a vero worker). */
  slots: number | null;
}

/** How many harbor runs the workers polling `taskQueue` can run at once (from their identities). */
export async function queueCapacity(client: Client, taskQueue: string): Promise<QueueCapacity> {
  const r = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  const identities = [...new Set((r.pollers ?? []).map((p) => p.identity ?? ''))];
  const slots = identities.map((i) => parseWorkerIdentity(i).slots);
  return { workers: identities.length, slots: slots.some((s) => s === null) ? null : slots.reduce<number>((a, s) => a + s!, 0) };
}

/** A note when the evaluation's concurrency is more than the workers can run (null when they can, or cannot tell). */
export function capacityNote(concurrency: number, taskQueue: string, cap: QueueCapacity): string | null {
  if (cap.workers === 0) return `note: no worker is polling ${taskQueue} yet; nothing runs until one does (vero worker, or vero dev)`;
  if (cap.slots === null || cap.slots >= concurrency) return null;
  return `note: concurrency ${concurrency}, but the ${cap.workers} worker(s) polling ${taskQueue} run at most ${cap.slots} task(s) at once; start more workers or raise --max-concurrent-tasks`;
}
