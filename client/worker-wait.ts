/**
 * Commands that need the evaluation's worker to answer (pause, resume, retry: Temporal updates, or a new run)
 * never wait without a word or without end: with no worker polling the evaluation's task queue they are refused
 * at once, naming the queue; an update no worker accepts, or a query no worker answers, within a bound is given up
 * with what it waited for.
 */
import { type Client, type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import { ConfigError, InfrastructureError } from '../model/errors';
import { workflowPollers } from './worker-capacity';

/** How long an update may wait for the worker to accept it. */
const UPDATE_ACCEPT_BOUND_MS = 30_000;

/** Refuses (InfrastructureError, exit 1) when no worker polls `taskQueue`: `what` would wait for one forever. */
export async function requireWorker(client: Client, taskQueue: string, what: string): Promise<void> {
  const pollers = await workflowPollers(client, taskQueue).catch(() => null);
  if (pollers === 0)
    throw new InfrastructureError(
      `${what}: no worker is polling the evaluation's task queue ${taskQueue}, and it needs one to answer; start one (vero worker --task-queue ${taskQueue}, or vero dev) and run this again`,
    );
}

/**
 * Runs `call` (an update) within UPDATE_ACCEPT_BOUND_MS; past it, refuses with what it waited for. The update
 * may still be applied if a worker takes it up later: the message says how to check. An update the workflow
 * refuses within the bound is a ConfigError with its reason.
 */
export async function withinAcceptBound<T>(client: Client, what: string, evalId: string, call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + UPDATE_ACCEPT_BOUND_MS;
  try {
    return await client.connection.withDeadline(deadline, call);
  } catch (e) {
    if (Date.now() < deadline)
      throw e instanceof WorkflowUpdateFailedError ? new ConfigError(`${evalId} refused: ${(e.cause ?? e).message}`) : e;
    throw new InfrastructureError(
      `${what}: no worker answered within ${UPDATE_ACCEPT_BOUND_MS / 1000}s (busy, or gone); it may still be applied when one does: vero status ${evalId}`,
    );
  }
}

/** How long a running workflow's query (a race's state, a spend pool's totals) may wait for a worker. */
const QUERY_BOUND_MS = 10_000;

/**
 * `handle.query(query)` within QUERY_BOUND_MS: a query waits for a worker to poll the task queue, so with none it
 * would hang; past the bound it is refused, naming `what` and the queue no worker polls.
 */
export async function queryWithinBound<T>(
  client: Client,
  handle: WorkflowHandle,
  query: QueryDefinition<T, []>,
  what: string,
  taskQueue: string,
): Promise<T> {
  const deadline = Date.now() + QUERY_BOUND_MS;
  try {
    return await client.connection.withDeadline(deadline, () => handle.query(query));
  } catch (e) {
    if (Date.now() < deadline) throw e;
    throw new InfrastructureError(
      `${what}: no worker answered within ${QUERY_BOUND_MS / 1000}s (is one polling ${taskQueue}? vero worker, or vero dev)`,
    );
  }
}
