/**
 * The evaluation workflows with Harbor-facing activities mocked (the results activities are the real ones):
 * lane concurrency across chunks, configuration failures, error rows. On the real dev server of the test run;
 * no harbor, no git.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { RunTaskInput } from '../../activities/run-task';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import type { EvalSettings } from '../../model/evaluation/input';
import type { TaskResult } from '../../model/evaluation/task-result';
import { FailureType } from '../../model/failures';
import { evaluateCandidate } from '../../workflows';
import { sleep } from '../helpers/process';
import { mockedHarborWorker, mockedSettings, scoredRow } from '../helpers/mocked-harbor';
import { client } from '../helpers/temporal';
import { failureTypes } from '../../model/errors';

jest.setTimeout(120_000);

const COMMIT = 'a'.repeat(40);

/** A Harbor failure of the task, retryable until `attempts` activity attempts were made. */
function harborTaskError(message: string, attempts: number): ApplicationFailure {
  const final = Context.current().info.attempt >= attempts;
  return ApplicationFailure.create({ message, type: FailureType.HarborTaskError, nonRetryable: final });
}

/** Runs one evaluation on a worker whose runTask is `runTask`; returns the result or the failure. */
async function evaluate(tasks: string[], s: EvalSettings, runTask: (input: RunTaskInput) => Promise<TaskResult>) {
  const { q, worker, connection, input } = await mockedHarborWorker({
    name: 'wf',
    commit: COMMIT,
    candidateRef: 'test',
    tasks,
    settings: s,
    runTask,
  });
  const c = await client();
  try {
    return await worker.runUntil(
      c.workflow
        .execute(evaluateCandidate, { workflowId: `${input.evalId}-${q}`, taskQueue: q, args: [input] })
        .then((r) => r as CandidateResult)
        .catch((e: unknown) => e as Error),
    );
  } finally {
    await connection.close();
    await c.connection.close();
  }
}

test('lanes: 30 tasks in chunks of 4 with concurrency 5 never run more than 5 at once, reach 5, and run each task once', async () => {
  const tasks = Array.from({ length: 30 }, (_, i) => `t${String(i).padStart(2, '0')}`);
  let inFlight = 0;
  let peak = 0;
  const runs: Record<string, number> = {};
  let holdUntil: number | undefined;
  const r = await evaluate(tasks, mockedSettings({ concurrency: 5, chunkSize: 4 }), async (input) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    runs[input.task] = (runs[input.task] ?? 0) + 1;
    // The first tasks hold their lanes (heartbeating) until five run at once, or 30 s after the first started: on a
    // loaded machine the quick tasks would otherwise finish before the fifth lane is granted, and "reaches 5" would
    // measure the machine's speed. A pool that grants four still fails, after one 30 s wait.
    holdUntil ??= Date.now() + 30_000;
    while (peak < 5 && Date.now() < holdUntil) {
      Context.current().heartbeat();
      await sleep(20);
    }
    // Heavy-tailed: most tasks quick, a few slow (a slow task must not hold its chunk's other lanes idle).
    await sleep(input.task.endsWith('7') ? 1500 : 100 + (Number(input.task.slice(1)) % 5) * 40);
    inFlight--;
    return scoredRow(input.task, Number(input.task.slice(1)) % 2, input);
  });
  expect(r).not.toBeInstanceOf(Error);
  const result = r as CandidateResult;
  expect(peak).toBe(5);
  expect(Object.keys(runs).sort()).toEqual(tasks);
  expect(Object.values(runs).every((n) => n === 1)).toBe(true);
  expect(result).toMatchObject({ status: 'completed', nScored: 30, nErrors: 0 });
  expect(result.score).toBeCloseTo(15 / 30);
});

test('a configuration failure (non-retryable HarborConfigError) fails the evaluation with its type, without running every task', async () => {
  const tasks = Array.from({ length: 12 }, (_, i) => `t${i}`);
  let started = 0;
  const r = await evaluate(tasks, mockedSettings({ concurrency: 2 }), async () => {
    started++;
    await sleep(50);
    throw ApplicationFailure.nonRetryable('harbor refused the dataset', FailureType.HarborConfigError);
  });
  expect(r).toBeInstanceOf(WorkflowFailedError);
  expect(failureTypes(r)).toContain(FailureType.HarborConfigError);
  expect(started).toBeLessThan(tasks.length);
});

test('error rows: a task whose attempts all fail is an error row with its runs and cause; the rest score; under the threshold it completes', async () => {
  const attempts: Record<string, number> = {};
  const r = await evaluate(['bad', 'good-1', 'good-2'], mockedSettings({ taskAttempts: 3, errorRateThreshold: 0.5 }), async (input) => {
    attempts[input.task] = (attempts[input.task] ?? 0) + 1;
    // As runTask does: retryable until the task's attempts are used up, then final.
    if (input.task === 'bad') throw harborTaskError('no trial has verifier rewards (RewardFileNotFoundError)', 3);
    return scoredRow(input.task, 1, input);
  });
  expect(r).not.toBeInstanceOf(Error);
  const result = r as CandidateResult;
  expect(attempts).toEqual({ bad: 3, 'good-1': 1, 'good-2': 1 });
  const bad = result.tasks!.find((t) => t.task === 'bad')!;
  expect(bad).toMatchObject({ status: 'error', score: null, runs: 3 });
  expect(bad.error).toMatch(/RewardFileNotFoundError/);
  expect(result).toMatchObject({ status: 'completed', nScored: 2, nErrors: 1 });
  expect(result.score).toBeCloseTo(2 / 3);

  // Over the threshold (1 error of 3 ≥ 0.3): the evaluation is failed, with the same rows.
  const over = (await evaluate(['bad', 'good-1', 'good-2'], mockedSettings({ taskAttempts: 1, errorRateThreshold: 0.3 }), async (input) => {
    if (input.task === 'bad') throw harborTaskError('boom', 1);
    return scoredRow(input.task, 1, input);
  })) as CandidateResult;
  expect(over).toMatchObject({ status: 'failed', nErrors: 1 });
});
