/**
 * Durability and cancellation with real processes: a worker subprocess SIGKILLed mid-evaluation, and a
 * cancellation while harbor runs. The scenarios are independent (each its own task queue, evaluation and workers)
 * and mostly wait on trials and heartbeat timeouts: they run concurrently.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { getProgress } from '../../client/running-eval';
import { listEvaluations } from '../../client/eval-listing';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import type { TaskResult } from '../../model/evaluation/task-result';
import { evalFixture, invocations, ROOT, runsPerTask, TASKS } from '../helpers/fixtures';
import { startEvaluation } from '../helpers/evaluation';
import { pidAlive, sleep, until } from '../helpers/process';
import { address, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(180_000);

function startWorkerProcess(taskQueue: string): ChildProcess {
  // Its own process group, like a worker on another machine: killing it leaves its harbor children orphaned.
  return spawn(path.join(ROOT, 'bin', 'vero'), ['worker', '--address', address(), '--task-queue', taskQueue], {
    detached: true,
    stdio: 'ignore',
  });
}

/**
 * Runs the evaluation on a worker process that is SIGKILLed once `crashNow` says so, then on a fresh one;
 * returns the result and when the kill happened.
 */
async function resultAcrossWorkerCrash(
  q: string,
  handle: { result(): Promise<unknown> },
  crashNow: () => Promise<boolean>,
): Promise<{ result: CandidateResult; killedAt: number }> {
  const first = startWorkerProcess(q);
  await until('the moment to crash the worker', async () => (await crashNow()) || undefined);
  const killedAt = Date.now();
  process.kill(-first.pid!, 'SIGKILL');
  await sleep(300);
  const second = startWorkerProcess(q);
  try {
    return { result: (await handle.result()) as CandidateResult, killedAt };
  } finally {
    process.kill(-second.pid!, 'SIGTERM');
  }
}

test.concurrent('a SIGKILLed worker: a new worker finishes the evaluation, finished tasks are not run again, same result', async () => {
  const q = uniqueQueue('crash');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: {
      tasks: {
        'hello-world': { reward: 1, duration_ms: 1200 },
        'count-words': { reward: 1, duration_ms: 1200 },
        'reverse-string': { reward: 1, duration_ms: 1200 },
      },
      default: { reward: 0, duration_ms: 1200 },
    },
    execution: { concurrency: 2, heartbeat_timeout: '3s' },
  });
  const { c, input, handle } = await startEvaluation(f.configFile);

  // Killed once two tasks are done.
  const { result, killedAt } = await resultAcrossWorkerCrash(q, handle, async () => (await getProgress(c, input.evalId)).done >= 2);

  // Same result as an uninterrupted run: the scenario's rewards, every task scored, one trial each.
  expect(result.nScored).toBe(6);
  expect(result.score).toBeCloseTo(3 / 6);
  for (const t of result.tasks as TaskResult[]) expect(t.nTrials).toBe(1);

  // Tasks whose activity completed before the kill (per the chunk's history) ran harbor exactly once.
  const history = await c.workflow.getHandle(`${input.evalId}/chunk-0`).fetchHistory();
  const completedBeforeKill = history
    .events!.filter(
      (e) =>
        e.activityTaskCompletedEventAttributes &&
        Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6) < killedAt,
    )
    .map((e) => JSON.parse(Buffer.from(e.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString()) as TaskResult)
    .map((r) => r.task);
  expect(completedBeforeKill.length).toBeGreaterThanOrEqual(2);
  const runs = runsPerTask(f.invocationLog);
  for (const t of completedBeforeKill) expect(runs[t]).toBe(1);
  expect(Object.keys(runs).sort()).toEqual(TASKS);
  // No stand-in process outlives the evaluation (orphans of the killed worker were stopped or finished).
  for (const inv of invocations(f.invocationLog).filter((i) => i.event === 'start')) expect(pidAlive(inv.pid)).toBe(false);
});

test.concurrent(
  'a large evaluation continues as new every chunks_per_run chunks: bounded runs, one listing, a crash mid-run loses nothing',
  async () => {
    const q = uniqueQueue('continue');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario: { tasks: { 'hello-world': { reward: 1, duration_ms: 700 } }, default: { reward: 0.5, duration_ms: 700 } },
      // 6 chunks of one task, 2 chunks per run: three runs of the parent.
      execution: { concurrency: 2, chunk_size: 1, chunks_per_run: 2, heartbeat_timeout: '3s' },
    });
    const { c, input, handle } = await startEvaluation(f.configFile);
    // Killed while the second run of the parent has chunks in flight.
    const { result } = await resultAcrossWorkerCrash(q, handle, async () => {
      const d = await c.workflow.getHandle(input.evalId).describe();
      return d.runId !== d.raw.workflowExecutionInfo?.firstRunId && (await getProgress(c, input.evalId)).running > 0;
    });
    expect(result.nScored).toBe(6);
    expect(result.score).toBeCloseTo((1 + 5 * 0.5) / 6);
    expect((result.tasks ?? []).map((t) => t.task)).toEqual(TASKS);
    // Every task's harbor ran once: the chunks of earlier runs were not started again, the killed worker's
    // harbor was adopted.
    expect(runsPerTask(f.invocationLog)).toEqual(Object.fromEntries(TASKS.map((t) => [t, 1])));
    // Three runs, each with at most two chunks and none of the rows; the first two continued as new.
    const runs: { status: string; runId: string }[] = [];
    for await (const w of c.workflow.list({ query: `WorkflowId = '${input.evalId}'` }))
      runs.push({ status: w.status.name, runId: w.runId });
    expect(runs.map((r) => r.status).sort()).toEqual(['COMPLETED', 'CONTINUED_AS_NEW', 'CONTINUED_AS_NEW']);
    for (const r of runs) {
      const events = (await c.workflow.getHandle(input.evalId, r.runId).fetchHistory()).events ?? [];
      expect(events.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes).length).toBeLessThanOrEqual(2);
      for (const e of events.filter((e) => e.childWorkflowExecutionCompletedEventAttributes)) {
        const summary = JSON.parse(
          Buffer.from(e.childWorkflowExecutionCompletedEventAttributes!.result!.payloads![0]!.data!).toString(),
        ) as object;
        expect(summary).not.toHaveProperty('results');
      }
    }
    // The evaluation is listed once, and began when its first run did.
    // Visibility is eventually consistent: wait for the final run's search attributes.
    const listed = await until('the evaluation listed as completed', async () => {
      const rows = (await listEvaluations(c)).filter((r) => r.evalId === input.evalId);
      return rows.some((r) => r.status === 'completed') && rows;
    });
    expect(listed).toHaveLength(1);
    // The search attributes and memo of the first run were carried to the last.
    expect(listed[0]).toMatchObject({ candidate: result.candidate, score: result.score });
    expect((await handle.describe()).memo?.home).toBe(f.home);
    const firstRunId = (await c.workflow.getHandle(input.evalId).describe()).raw.workflowExecutionInfo?.firstRunId;
    expect(runs.find((r) => r.runId === firstRunId)?.status).toBe('CONTINUED_AS_NEW');
    expect(Date.parse(result.startedAt)).toBeLessThan(listed[0]!.startedAt.getTime());
    for (const inv of invocations(f.invocationLog).filter((i) => i.event === 'start')) expect(pidAlive(inv.pid)).toBe(false);
  },
);

test.concurrent(
  'a worker SIGKILLed after a spend cap was reached: the new worker starts nothing more, the result is the same budget_exhausted',
  async () => {
    const q = uniqueQueue('capcrash');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario: {
        tasks: { 'add-cli-flag': { reward: 1, cost_usd: 5, duration_ms: 200 } },
        default: { reward: 1, cost_usd: 0.5, duration_ms: 4000 },
      },
      // Two lanes: count-words runs beside the task that reaches the cap (no lane starts a task after it).
      execution: { concurrency: 2, chunk_size: 3, max_cost_usd: 1, heartbeat_timeout: '3s' },
    });
    const { c, input, handle } = await startEvaluation(f.configFile);
    // Killed while the task running beside the one that reached the cap still runs, after the parent has stopped.
    const { result } = await resultAcrossWorkerCrash(q, handle, async () => {
      const p = await getProgress(c, input.evalId).catch(() => null);
      return !!p?.spendCapReached && p.running === 1;
    });
    expect(result.status).toBe('budget_exhausted');
    expect((result.tasks ?? []).filter((t) => t.status === 'scored').map((t) => t.task)).toEqual(['add-cli-flag', 'count-words']);
    expect(result.spend).toMatchObject({ nNotRun: 4, reached: 'max_cost_usd $1.00 reached ($5.0000 spent)' });
    // The history keeps the cap: the new worker started no task the cap had kept from running.
    expect(Object.keys(runsPerTask(f.invocationLog)).sort()).toEqual(['add-cli-flag', 'count-words']);
    expect(runsPerTask(f.invocationLog)['add-cli-flag']).toBe(1);
  },
);

test.concurrent('cancelling an evaluation stops the running harbor process group and records the cancellation', async () => {
  const q = uniqueQueue('cancel');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: { default: { process: 'hang' } },
    tasks: { names: ['hello-world', 'count-words'] },
    execution: { concurrency: 2 },
  });
  await withWorker(q, async () => {
    const { handle } = await startEvaluation(f.configFile);
    const starts = await until('both harbor runs started', async () => {
      const s = invocations(f.invocationLog).filter((i) => i.event === 'start');
      return s.length === 2 && s.every((i) => pidAlive(i.pid)) && s;
    });
    await handle.cancel();
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    // WAIT_CANCELLATION_COMPLETED: by the time the workflow is cancelled, the groups are gone.
    for (const s of starts) expect(pidAlive(s.pid)).toBe(false);
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    // Harbor recorded the interrupted trials as CancelledError (SIGTERM, teardown, then exit 130).
    const ends = invocations(f.invocationLog).filter((i) => i.event === 'end');
    expect(ends.map((e) => e.exit_code)).toEqual([130, 130]);
  });
});
