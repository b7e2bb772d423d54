/**
 * A lane is for work, not for Harbor's teardown: once every trial of a task has passed its verifier (its reward on
 * disk), the task's lane starts the next task while that harbor tears down, at most `teardown_concurrency` at once;
 * the row still comes from Harbor's result.json, a harbor failing in its teardown gives the same row as with the
 * lane held (`teardown_concurrency: 0`), and a cancel during the teardown leaves no harbor running. Real dev
 * server, real worker, the stand-in with a teardown phase of its own (harbor-standin/README.md).
 */
import { getProgress } from '../../client/running-eval';
import { pauseEvaluation, resumeEvaluation } from '../../client/pause';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { evalFixture, invocations, runsPerTask, taskOf, type Invocation } from '../helpers/fixtures';
import { startEvaluation } from '../helpers/evaluation';
import { pidAlive, spawnWorker, until } from '../helpers/process';
import { address, fileWorker, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(180_000);

const q = fileWorker('teardown-lanes');

/** The most task harbors alive at once, from the stand-in's start and end lines (an end before a start at a tie). */
function mostAlive(log: Invocation[]): number {
  const events = log.map((i) => ({ t: Date.parse(i.time), d: i.event === 'start' ? 1 : -1 })).sort((a, b) => a.t - b.t || a.d - b.d);
  let alive = 0;
  let most = 0;
  for (const e of events) most = Math.max(most, (alive += e.d));
  return most;
}

const rowsByTask = (r: CandidateResult) =>
  Object.fromEntries(
    (r.tasks ?? []).map((t) => [t.task, { status: t.status, score: t.score, runs: t.runs, nTrials: t.nTrials, exceptions: t.exceptions }]),
  );

test.concurrent(
  'lanes start the next task while harbors tear down, at most teardown_concurrency at once; the scores are Harbor’s',
  async () => {
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario: { default: { reward: 1, duration_ms: 200 }, teardown_ms: 2000 },
      execution: { concurrency: 2, teardown_concurrency: 1 },
    });
    const { result } = await startEvaluation(f.configFile);
    const r = await result();
    expect(r.nScored).toBe(6);
    expect(Object.values(rowsByTask(r)).map((t) => t.score)).toEqual([1, 1, 1, 1, 1, 1]);
    const log = invocations(f.invocationLog);
    expect(log.filter((i) => i.event === 'end').map((i) => i.exit_code)).toEqual([0, 0, 0, 0, 0, 0]);
    // Without the release, at most `concurrency` (2) harbors run at once; with it, one more tears down beside them,
    // and never two (the bound).
    expect(mostAlive(log)).toBe(3);
  },
);

test.concurrent('by default twice the concurrency tear down at once: a teardown outlasts a short task', async () => {
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1, duration_ms: 200 }, teardown_ms: 8000 },
    execution: { concurrency: 1 },
  });
  const r = await (await startEvaluation(f.configFile)).result();
  expect(r.nScored).toBe(6);
  // One lane: its running harbor and two tearing down (a bound of the concurrency would allow one).
  expect(mostAlive(invocations(f.invocationLog))).toBe(3);
});

test.concurrent('a harbor failing during its teardown gives the same rows as with the lane held until it exits', async () => {
  const scenario = {
    tasks: {
      // Its first harbor dies during its teardown (the reward on disk, no result.json), its second does not.
      'hello-world': [{ reward: 1, teardown_fault: 'crash' }, { reward: 1 }],
      // Every harbor dies during its teardown: an error row after its attempts.
      'count-words': { reward: 1, teardown_fault: 'crash' },
    },
    default: { reward: 0.5 },
    teardown_ms: 1500,
  };
  const run = async (teardownConcurrency: number) => {
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario,
      tasks: { include: ['hello-world', 'count-words', 'sum-numbers'] },
      execution: { concurrency: 2, task_attempts: 2, teardown_concurrency: teardownConcurrency },
    });
    return { rows: rowsByTask(await (await startEvaluation(f.configFile)).result()), log: invocations(f.invocationLog) };
  };
  const [held, released] = await Promise.all([run(0), run(2)]);
  expect(released.rows).toEqual(held.rows);
  expect(released.rows['hello-world']).toMatchObject({ status: 'scored', score: 1, runs: 2 });
  expect(released.rows['count-words']).toMatchObject({ status: 'error', score: null, runs: 2 });
  expect(released.rows['sum-numbers']).toMatchObject({ status: 'scored', score: 0.5, runs: 1 });
  // The crashed harbors were the faults scripted: killed during their teardown (no end line).
  const starts = (log: Invocation[]) =>
    log
      .filter((i) => i.event === 'start')
      .map(taskOf)
      .sort();
  expect(starts(released.log)).toEqual(starts(held.log));
});

test.concurrent('a cancel during the teardown stops the tearing-down harbors too: CANCELLED means none runs', async () => {
  const queue = uniqueQueue('teardown-cancel');
  const f = evalFixture({
    taskQueue: queue,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1 }, teardown_ms: 120_000 },
    execution: { concurrency: 2, stop_grace: '10s' },
  });
  await withWorker(queue, async () => {
    const { c, evalId } = await startEvaluation(f.configFile);
    const handle = c.workflow.getHandle(evalId);
    // Both lanes gave their tasks' teardowns up and run the next two: `vero status` counts them.
    await until('two tasks tearing down and two more started', async () => {
      const p = await getProgress(c, evalId).catch(() => null);
      return (p?.tearingDown ?? 0) >= 2 && invocations(f.invocationLog).filter((i) => i.event === 'start').length >= 4;
    });
    const pids = invocations(f.invocationLog)
      .filter((i) => i.event === 'start')
      .map((i) => i.pid);
    await handle.cancel();
    const closed = handle.result().then(
      () => 'completed',
      () => {
        const alive = pids.filter(pidAlive);
        return alive.length ? `closed with harbors running: ${alive.join(', ')}` : 'closed';
      },
    );
    await until('every harbor to stop', () => !pids.some(pidAlive), 60_000);
    expect(await closed).toBe('closed');
    expect((await handle.describe()).status.name).toBe('CANCELLED');
  });
});

test.concurrent('tearing-down harbors of a SIGKILLed worker are adopted by the next worker, not run again', async () => {
  const queue = uniqueQueue('teardown-adopt');
  const f = evalFixture({
    taskQueue: queue,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { default: { reward: 1, duration_ms: 300 }, teardown_ms: 4000 },
    tasks: { include: ['hello-world', 'count-words', 'sum-numbers', 'reverse-string'] },
    execution: { concurrency: 2, heartbeat_timeout: '3s' },
  });
  const first = spawnWorker(address(), queue, { VERO_REAPER_INTERVAL_MS: '500' });
  let second: ReturnType<typeof spawnWorker> | undefined;
  try {
    const { c, evalId, result } = await startEvaluation(f.configFile);
    await until('two tasks tearing down', async () => ((await getProgress(c, evalId).catch(() => null))?.tearingDown ?? 0) >= 2);
    first.kill('SIGKILL');
    second = spawnWorker(address(), queue, { VERO_REAPER_INTERVAL_MS: '500' });
    const r = await result();
    expect(r.nScored).toBe(4);
    // Each task's harbor ran once: the tearing-down ones were adopted by the new worker's attempts.
    expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 1, 'hello-world': 1, 'reverse-string': 1, 'sum-numbers': 1 });
  } finally {
    first.kill('SIGKILL');
    second?.kill('SIGTERM');
  }
});

test.concurrent('a pause with --stop-running stops the running tasks and lets the tearing-down ones finish and count', async () => {
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: {
      // The first two tasks (in name order) tear down for a while; the next two run until stopped, then briefly.
      tasks: {
        'count-words': { reward: 1, teardown_ms: 4000 },
        'hello-world': { reward: 1, teardown_ms: 4000 },
        '*': [{ reward: 1, duration_ms: 120_000 }, { reward: 1 }],
      },
    },
    tasks: { include: ['hello-world', 'count-words', 'sum-numbers', 'reverse-string'] },
    execution: { concurrency: 2 },
  });
  const { c, evalId, result } = await startEvaluation(f.configFile);
  const started = () => invocations(f.invocationLog).filter((i) => i.event === 'start');
  await until('two tasks tearing down and the next two started', async () => {
    const p = await getProgress(c, evalId).catch(() => null);
    return (p?.tearingDown ?? 0) === 2 && started().length === 4;
  });
  await pauseEvaluation(c, evalId, { stopRunning: true });
  await until('every harbor to end', () => invocations(f.invocationLog).filter((i) => i.event === 'end').length === 4);
  const exits = Object.fromEntries(
    invocations(f.invocationLog)
      .filter((i) => i.event === 'end')
      .map((i) => [taskOf(i), i.exit_code]),
  );
  // The tearing-down harbors finished (exit 0), the running ones were stopped (Harbor's exit on SIGTERM).
  expect(exits).toEqual({ 'count-words': 0, 'hello-world': 0, 'reverse-string': 130, 'sum-numbers': 130 });
  await until('the finished ones counted while paused', async () => (await getProgress(c, evalId)).scored === 2);
  await resumeEvaluation(c, evalId);
  const r = await result();
  expect(r.nScored).toBe(4);
  expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 1, 'hello-world': 1, 'reverse-string': 2, 'sum-numbers': 2 });
});
