/**
 * `temporal workflow reset` of an evaluation (Temporal's own way to recover from a bug in workflow code): reset to
 * its first workflow task, to one in the middle (after some tasks finished) and, once it has completed, to its
 * last; with and without a spend pool. Each finishes correctly: every task scored, finished tasks not run again
 * (their jobs are collected from disk), and the spend counted once, in the evaluation and in its pool. Real dev
 * server, real worker, the Harbor stand-in (its invocation log counts harbor runs per task). Each test has its own
 * fixture, task queue, worker and pool, and mostly waits on its evaluation: they run side by side.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { prepareEvalInput } from '../../client/eval-input';
import { spendPoolState } from '../../client/spend-pools';
import { startOrAttach } from '../../client/eval-start';
import { getProgress } from '../../client/running-eval';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { spendPoolWorkflowId } from '../../model/evaluation/spend-cap';
import { evalFixture, invocations, runsPerTask, taskOf } from '../helpers/fixtures';
import { until } from '../helpers/process';
import { address, cancelAndSettle, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(240_000);

const TASKS = ['count-words', 'hello-world', 'sum-numbers', 'reverse-string'];
/** What each trial of the stand-in reports it spent. */
const COST = 0.25;

/**
 * The event id of the run's first or latest completed workflow task, or of the first one after the first task's
 * spend came in (`taskSpent`: later spend, chunks and the pool's reports are done again after the reset).
 */
async function workflowTaskEvent(c: Client, evalId: string, which: 'first' | 'after-first-spend' | 'latest'): Promise<EventId> {
  const events = (await c.workflow.getHandle(evalId).fetchHistory()).events!;
  const completed = events.filter((e) => e.workflowTaskCompletedEventAttributes);
  if (which === 'first') return completed[0]!.eventId!;
  if (which === 'latest') return completed[completed.length - 1]!.eventId!;
  const spent = events.find((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'taskSpent');
  return completed.find((e) => Number(e.eventId) > Number(spent!.eventId))!.eventId!;
}

type EventId = NonNullable<temporal.api.history.v1.IHistoryEvent['eventId']>;

/** Resets the evaluation's current run to a completed workflow task, as `temporal workflow reset` does. */
async function reset(c: Client, evalId: string, eventId: EventId): Promise<void> {
  await c.workflowService.resetWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId: evalId },
    workflowTaskFinishEventId: eventId,
    requestId: randomUUID(),
    reason: 'test: reset',
  });
}

/** Tasks whose harbor run had ended (an `end` line in the invocation log). */
const ended = (log: string) =>
  new Set(
    invocations(log)
      .filter((i) => i.event === 'end')
      .map(taskOf),
  );

async function start(pool: string | null, q: string) {
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    tasks: { names: TASKS },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1, cost_usd: COST, duration_ms: 1500 } },
    // Two chunks of two tasks, one lane: a reset lands while some tasks have finished and others are to come.
    execution: { concurrency: 1, chunk_size: 2, ...(pool ? { max_cost_usd: 100, spend_pool: pool } : { max_cost_usd: 100 }) },
  });
  const c = await client();
  const cfg = loadEvalConfig(f.configFile);
  const input = await prepareEvalInput(cfg, 'improved');
  const { handle } = await startOrAttach(c, input, cfg.temporal.task_queue);
  return { f, c, id: input.evalId, handle };
}

/** Every task scored; harbor ran each finished-before-reset task once, no task more than twice (the one in flight). */
async function expectFinishedOnce(c: Client, id: string, log: string, finishedBefore: Set<string>, pool: string | null) {
  const result = (await c.workflow.getHandle(id).result()) as CandidateResult;
  expect(result).toMatchObject({ status: 'completed', nTasks: TASKS.length, nScored: TASKS.length });
  const runs = runsPerTask(log);
  for (const t of TASKS) expect(runs[t]).toBeGreaterThanOrEqual(1);
  for (const t of finishedBefore) expect(runs[t]).toBe(1);
  for (const t of TASKS) expect(runs[t]).toBeLessThanOrEqual(2);
  // The real spend: what the trials on disk (and any pruned before a retry) report, at least one trial a task.
  const real = result.usage!.costUsd!;
  expect(real).toBeGreaterThanOrEqual(TASKS.length * COST - 1e-9);
  expect(result.spend?.spent.costUsd).toBeCloseTo(real);
  if (pool) expect((await spendPoolState(c, pool)).spent.costUsd).toBeCloseTo(real);
  return result;
}

async function endPool(c: Client, pool: string | null) {
  if (pool)
    await c.workflow
      .getHandle(spendPoolWorkflowId(pool))
      .terminate('test over')
      .catch(() => undefined);
}

test.concurrent.each([
  ['with a spend pool', true],
  ['without a pool', false],
])(
  'reset to the first workflow task while the first chunk runs (%s): completes, finished tasks collected not re-run, spend counted once',
  async (_what, pooled) => {
    const q = uniqueQueue('reset-first');
    const pool = pooled ? `reset-${q}` : null;
    const { f, c, id } = await start(pool, q);
    await withWorker(q, async () => {
      try {
        await until('a task to finish', async () => (await getProgress(c, id)).done >= 1);
        const finishedBefore = ended(f.invocationLog);
        await reset(c, id, await workflowTaskEvent(c, id, 'first'));
        await expectFinishedOnce(c, id, f.invocationLog, finishedBefore, pool);
        // The chunk the reset run replaced was stopped, not left running its tasks for nothing.
        expect((await c.workflow.getHandle(`${id}/chunk-0`).describe()).status.name).not.toBe('RUNNING');
      } finally {
        await cancelAndSettle(id);
        await endPool(c, pool);
      }
    });
  },
);

test.concurrent(
  'reset to a workflow task in the middle (after the first spend, the second chunk running) of a pooled evaluation: completes, nothing counted twice',
  async () => {
    const q = uniqueQueue('reset-mid');
    const pool = `reset-${q}`;
    const { f, c, id } = await start(pool, q);
    await withWorker(q, async () => {
      try {
        await until('three tasks to finish', async () => (await getProgress(c, id)).done >= 3);
        const finishedBefore = ended(f.invocationLog);
        // Back to just after the first task's spend came in: chunk 0's end, its spend and chunk 1's start are redone.
        await reset(c, id, await workflowTaskEvent(c, id, 'after-first-spend'));
        await expectFinishedOnce(c, id, f.invocationLog, finishedBefore, pool);
      } finally {
        await cancelAndSettle(id);
        await endPool(c, pool);
      }
    });
  },
);

test.concurrent(
  'reset of a completed pooled evaluation to its last workflow task: completes again, nothing re-run, spend counted once',
  async () => {
    const q = uniqueQueue('reset-last');
    const pool = `reset-${q}`;
    const { f, c, id, handle } = await start(pool, q);
    await withWorker(q, async () => {
      try {
        const first = (await handle.result()) as CandidateResult;
        expect(first.status).toBe('completed');
        await reset(c, id, await workflowTaskEvent(c, id, 'latest'));
        const again = await expectFinishedOnce(c, id, f.invocationLog, new Set(TASKS), pool);
        expect(again.score).toBe(first.score);
      } finally {
        await cancelAndSettle(id);
        await endPool(c, pool);
      }
    });
  },
);
