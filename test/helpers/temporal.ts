/** Connects tests to the dev server started by the global setup; runs workers on per-test task queues. */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TaskResult } from '../../model/evaluation/task-result';
import { closeForkServers } from '../../harbor/forkserver';
import { createVeroWorker } from '../../worker/create-worker';
import { prebuiltWorkflowBundle } from '../../worker/workflow-bundle';

// In-process workers fork real Harbor from this test file's fork servers: they end with the file, not with jest
// (which runs the files in one process here, each with its own modules).
afterAll(closeForkServers);

let runtimeInstalled = false;
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    /* already installed in this process */
  }
}

export function address(): string {
  const a = process.env.TEMPORAL_TEST_ADDRESS;
  if (!a) throw new Error('TEMPORAL_TEST_ADDRESS is not set: the jest global setup did not start the dev server');
  return a;
}

export async function client(): Promise<Client> {
  const connection = await Connection.connect({ address: address() });
  return new Client({ connection, namespace: 'default' });
}

export const uniqueQueue = (name: string): string => `test-${name}-${randomUUID().slice(0, 8)}`;

let bundle: Promise<WorkflowBundleWithSourceMap | { codePath: string }> | undefined;
/**
 * The workflows as the tests' sources say: `npm run build`'s bundle when it was built from these very sources
 * (worker/workflow-bundle.ts), else bundled from them once per test file.
 */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap | { codePath: string }> {
  bundle ??= (async () => {
    const prebuilt = prebuiltWorkflowBundle({ checkSources: true });
    return 'codePath' in prebuilt
      ? prebuilt
      : bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows'), logger: new DefaultLogger('WARN') });
  })();
  return bundle;
}

/** An in-process vero worker (not yet running) on the test server, with the prebuilt bundle. */
async function testWorker(taskQueue: string): ReturnType<typeof createVeroWorker> {
  quietRuntime();
  return createVeroWorker({
    address: address(),
    namespace: 'default',
    taskQueue,
    workflowBundle: await workflowBundle(),
    shutdownGraceTime: '1s',
  });
}

/** Runs an in-process worker while `fn` runs. */
export async function withWorker<T>(taskQueue: string, fn: () => Promise<T>): Promise<T> {
  const { worker, connection } = await testWorker(taskQueue);
  try {
    return await worker.runUntil(fn());
  } finally {
    await connection.close();
  }
}

/**
 * One in-process worker for a whole test file, on a task queue of its own (returned): started before the file's
 * first test, stopped after its last. For concurrent tests that need no worker of their own (none kills it).
 */
export function fileWorker(name: string): string {
  const taskQueue = uniqueQueue(name);
  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const { worker, connection } = await testWorker(taskQueue);
    const running = worker.run();
    running.catch(() => undefined); // awaited (and so reported) when the file ends
    stop = async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      try {
        await running;
      } finally {
        await connection.close();
      }
    };
  });
  afterAll(() => stop?.());
  return taskQueue;
}

export type { Worker };

/** Tasks whose runTask activity completed in the evaluation's first chunk (before `beforeMs`, when given). */
export async function completedTasks(c: Client, evalId: string, beforeMs = Infinity): Promise<string[]> {
  const history = await c.workflow.getHandle(`${evalId}/chunk-0`).fetchHistory();
  return history
    .events!.filter(
      (e) =>
        e.activityTaskCompletedEventAttributes &&
        Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6) < beforeMs,
    )
    .map(
      (e) => JSON.parse(Buffer.from(e.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString()) as Partial<TaskResult>,
    )
    .filter((r) => typeof r.task === 'string') // runTask results (saveChunkResults returns a summary)
    .map((r) => r.task!);
}

/**
 * Cancels an evaluation a test left running and waits until it has closed, i.e. its harbor runs are stopped:
 * only then may the test stop its worker (a stopped worker leaves running harbors for the next one to adopt).
 */
export async function cancelAndSettle(evalId: string): Promise<void> {
  const handle = (await client()).workflow.getHandle(evalId);
  await handle.cancel().catch(() => undefined);
  await handle.result().catch(() => undefined);
}
