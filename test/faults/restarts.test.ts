/**
 * Crashes of the infrastructure itself: the Temporal server killed and restarted on the same database file,
 * and the worker SIGKILLed at several points. The evaluation completes, with the uninterrupted result, and no
 * task whose activity had completed runs harbor again.
 *
 * The scenarios are independent (each its own task queue, evaluation and workers; the server-restarting ones their
 * own servers, the reaper ones their own host records), and most of their time is waiting on trials and timeouts:
 * they run concurrently (jest's maxConcurrency at a time).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { getProgress } from '../../client/running-eval';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { freePort, startDevServer } from '../../infra/dev-server';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { findTemporalCli } from '../../infra/temporal-cli';
import { evalFixture, invocations, ROOT, runsPerTask, tempDir, TASKS } from '../helpers/fixtures';
import { pidAlive, sleep, spawnWorker, until, WorkerProcess } from '../helpers/process';
import { address, client, completedTasks, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(240_000);

const workers: WorkerProcess[] = [];
function worker(addr: string, taskQueue: string, env: Record<string, string> = {}): WorkerProcess {
  // The orphan reaper looks every 0.5 s: the adoption tests below also check that it leaves adoptable groups alone.
  const w = spawnWorker(addr, taskQueue, { VERO_REAPER_INTERVAL_MS: '500', ...env });
  workers.push(w);
  return w;
}

/** Until a worker polls: then its orphan reaper runs, at once and every 0.5 s. */
async function untilPolling(w: WorkerProcess): Promise<void> {
  await until('the worker to poll', async () => /worker polling/.test(w.tail(1_000_000)), 60_000);
}

/** Awaits the result; on a timeout, fails with the workers' logs. */
async function resultOrDiagnose(c: Client, evalId: string, ms = 120_000): Promise<CandidateResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const logs = workers.map((w) => w.tail());
      reject(new Error(`no result in ${ms} ms; worker logs:\n${logs.join('\n---\n')}`));
    }, ms);
  });
  try {
    return await Promise.race([c.workflow.getHandle(evalId).result() as Promise<CandidateResult>, timeout]);
  } finally {
    clearTimeout(timer); // never fire after the test (it would fail whichever test runs next)
  }
}

const slowScenario = {
  tasks: {
    'hello-world': { reward: 1, duration_ms: 900 },
    'count-words': { reward: 1, duration_ms: 900 },
    'reverse-string': { reward: 0.5, duration_ms: 900 },
  },
  default: { reward: 0, duration_ms: 900 },
};
const EXPECTED_SCORE = 2.5 / 6;

function assertSameResult(r: CandidateResult): void {
  expect(r.nScored).toBe(6);
  expect(r.score).toBeCloseTo(EXPECTED_SCORE);
  for (const t of r.tasks!) expect(t.nTrials).toBe(1);
}

/** An evaluation of the six example tasks under the slow scenario, started but with no worker yet. */
async function startSlowEvaluation(name: string, timeScale: string) {
  const q = uniqueQueue(name);
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: slowScenario,
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: timeScale } },
    execution: { concurrency: 3, heartbeat_timeout: '3s' },
  });
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  const c = await client();
  await startOrAttach(c, input, q);
  return { q, f, input, c };
}

/** After the first worker was killed at `killedAt`: a fresh worker finishes; same result; no completed task re-run. */
async function finishAfterKill(e: Awaited<ReturnType<typeof startSlowEvaluation>>, killedAt: number): Promise<Record<string, number>> {
  const second = worker(address(), e.q);
  try {
    assertSameResult(await resultOrDiagnose(e.c, e.input.evalId));
  } finally {
    second.kill('SIGTERM');
  }
  const runs = runsPerTask(e.f.invocationLog);
  for (const t of await completedTasks(e.c, e.input.evalId, killedAt)) expect(runs[t]).toBe(1);
  expect(Object.keys(runs).sort()).toEqual(TASKS);
  return runs;
}

test.concurrent.each([
  ['before any task finished', (p: { done: number; running: number }) => p.running > 0],
  ['after the last task finished', (p: { done: number; total: number }) => p.done === p.total],
])('worker SIGKILLed %s: a new worker completes the evaluation with the same result', async (_when, killWhen) => {
  const e = await startSlowEvaluation('kill', '1');
  const first = worker(address(), e.q);
  await until('the kill point', async () => killWhen(await getProgress(e.c, e.input.evalId)));
  const killedAt = Date.now();
  first.kill('SIGKILL');
  await finishAfterKill(e, killedAt);
});

/**
 * A dev server of the test's own on a SQLite file, that the test can kill (SIGKILL, no shutdown) and start again
 * on the same file and port; with an evaluation of the six example tasks under the slow scenario configured for it.
 */
async function ownServerWithEvaluation(name: string, timeScale = '1', scenario: object = slowScenario) {
  const dir = tempDir(`vero-${name}-`);
  const opts = {
    temporalCli: findTemporalCli(),
    port: await freePort(),
    dbFile: path.join(dir, 'temporal.db'),
    logFile: path.join(dir, 'server.log'),
  };
  let server = await startDevServer(opts);
  const q = uniqueQueue(name);
  const f = evalFixture({
    taskQueue: q,
    address: server.address,
    scenario,
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: timeScale } },
    execution: { concurrency: 2, heartbeat_timeout: '5s' },
  });
  return {
    q,
    f,
    address: server.address,
    kill: () => process.kill(-server.pid, 'SIGKILL'),
    restart: async () => void (server = await startDevServer(opts)),
    stop: () => server.stop(),
  };
}

test.concurrent('the Temporal server killed and restarted on the same database file mid-evaluation: it completes', async () => {
  const { q, f, address: addr, kill, restart, stop } = await ownServerWithEvaluation('server');
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  const conn = await Connection.connect({ address: addr });
  const c = new Client({ connection: conn });
  await startOrAttach(c, input, q);
  let w = worker(addr, q);
  try {
    await until('two tasks done', async () => (await getProgress(c, input.evalId)).done >= 2);
    kill();
    await sleep(1500);
    await restart();
    // The worker may or may not survive the outage; a fresh one is what an operator would start.
    w.kill('SIGKILL');
    w = worker(addr, q);
    const conn2 = await Connection.connect({ address: addr });
    const c2 = new Client({ connection: conn2 });
    const r = (await c2.workflow.getHandle(input.evalId).result()) as CandidateResult;
    assertSameResult(r);
    const runs = runsPerTask(f.invocationLog);
    expect(Object.keys(runs).sort()).toEqual(TASKS);
    // Only tasks that were running at the crash may have run twice.
    expect(Object.values(runs).filter((n) => n > 1).length).toBeLessThanOrEqual(2);
    expect(invocations(f.invocationLog).filter((i) => i.event === 'start').length).toBeLessThanOrEqual(8);
    await conn2.close();
  } finally {
    w.kill('SIGTERM');
    await conn.close().catch(() => undefined);
    await stop();
  }
});

test.concurrent.each([
  ['during collation (harbor done, its job dir not yet read)', 'collate'],
  ['during the result write (finalizeEvaluation)', 'finalize'],
])('worker SIGKILLed %s: the evaluation completes with the same result, no task re-run', async (_when, point) => {
  const e = await startSlowEvaluation(`kill-${point}`, '0');
  const markers = tempDir('vero-fault-');
  // Only the first worker pauses at the fault point (long enough to be killed there).
  const first = worker(address(), e.q, { VERO_FAULT_PAUSE: `${point}:60000`, VERO_FAULT_MARKER_DIR: markers });
  await until(`the worker paused at ${point}`, async () => fs.existsSync(path.join(markers, point)));
  const killedAt = Date.now();
  first.kill('SIGKILL');
  const runs = await finishAfterKill(e, killedAt);
  // Killed while writing the result: every task had completed, so none ran twice.
  if (point === 'finalize') expect(Object.values(runs).every((n) => n === 1)).toBe(true);
});

test.concurrent('worker crashes cost no task attempt and no repeated trial: the next attempt adopts the running harbor', async () => {
  const q = uniqueQueue('adopt');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: { default: { reward: 1, duration_ms: 30_000 } },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    tasks: { names: ['count-words', 'hello-world', 'sum-numbers'] },
    // One attempt: if a crash counted, the task would be an error row.
    execution: { concurrency: 3, heartbeat_timeout: '3s', task_attempts: 1 },
  });
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  const c = await client();
  await startOrAttach(c, input, q);
  let w = worker(address(), q);
  try {
    await until('three harbor runs', async () => invocations(f.invocationLog).filter((i) => i.event === 'start').length === 3);
    for (let i = 0; i < 3; i++) {
      w.kill('SIGKILL');
      w = worker(address(), q);
      await sleep(5_000);
    }
    const r = await resultOrDiagnose(c, input.evalId, 180_000);
    expect(r.nScored).toBe(3);
    // Harbor started once per task: the trials ran once, and were adopted across the crashes.
    expect(runsPerTask(f.invocationLog)).toEqual({ 'count-words': 1, 'hello-world': 1, 'sum-numbers': 1 });
    for (const t of r.tasks!) expect(t.notes!.join(' ')).toMatch(/adopted the running harbor|collected the job/);
  } finally {
    w.kill('SIGTERM');
  }
});

test.concurrent('a cancel that arrives while the worker is dead never starts harbor again', async () => {
  const q = uniqueQueue('cancel-crash');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: { default: { reward: 1, duration_ms: 20_000 } },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    tasks: { names: ['count-words', 'hello-world', 'sum-numbers', 'reverse-string'] },
    execution: { concurrency: 4, heartbeat_timeout: '3s' },
  });
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  const c = await client();
  const { handle } = await startOrAttach(c, input, q);
  let w = worker(address(), q);
  try {
    await until('four harbor runs', async () => invocations(f.invocationLog).filter((i) => i.event === 'start').length === 4);
    w.kill('SIGKILL');
    await handle.cancel();
    w = worker(address(), q);
    await expect(handle.result()).rejects.toThrow();
    await sleep(3_000);
    expect(invocations(f.invocationLog).filter((i) => i.event === 'start')).toHaveLength(4);
  } finally {
    w.kill('SIGTERM');
  }
});

test.concurrent(
  'start-eval --wait waits through a server outage longer than its client retries, and reports the evaluation as it ended',
  async () => {
    // Trials of 4.5 s: the evaluation is still running when the server goes down.
    const { q, f, address: addr, kill, restart, stop } = await ownServerWithEvaluation('outage-wait', '5');
    let w = worker(addr, q);
    const cli = spawn(path.join(ROOT, 'bin', 'vero'), ['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    cli.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    cli.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => cli.on('exit', (code) => r(code)));
    try {
      await until('a task done', async () => /\[running\] [1-9]\/6 done/.test(stderr), 120_000);
      kill();
      w.kill('SIGKILL');
      // The server stays down until start-eval says it waits for it (or gives up): the outage outlasted the Temporal
      // client's own retries (about 20 s), so the wait is start-eval's.
      let gaveUp = false;
      void exited.then(() => (gaveUp = true));
      await until(
        'start-eval to say it waits for the server',
        async () => gaveUp || /waiting for the Temporal server/.test(stderr),
        120_000,
      );
      expect(stderr).toMatch(/waiting for the Temporal server/);
      await restart();
      w = worker(addr, q);
      expect(await exited).toBe(0);
      expect(stdout).toMatch(/score {5}0\.417 over 6 task\(s\)/);
    } finally {
      cli.kill('SIGKILL');
      w.kill('SIGTERM');
      await stop();
    }
  },
);

test.concurrent(
  'an orphaned harbor whose task went on on another host is stopped by the reaper of its own host; one waiting for adoption is not',
  async () => {
    const q = uniqueQueue('reap');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      // The first trial would run for 2 minutes (so it cannot end by itself during the test), the next one 15 s.
      scenario: {
        tasks: {
          'hello-world': [
            { reward: 1, duration_ms: 120_000 },
            { reward: 1, duration_ms: 15_000 },
          ],
        },
      },
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      tasks: { names: ['hello-world'] },
      execution: { concurrency: 1, heartbeat_timeout: '3s', task_attempts: 1 },
    });
    // Two "hosts" on this machine: their own host ids, one record of groups (a host's /tmp).
    const groups = tempDir('vero-groups-');
    const on = (host: string) => ({ VERO_HOST_ID: host, VERO_HOST_GROUPS_DIR: groups, VERO_REAPER_INTERVAL_MS: '500' });
    const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
    const c = await client();
    const { handle } = await startOrAttach(c, input, q);
    const starts = () => invocations(f.invocationLog).filter((i) => i.event === 'start');
    const a = worker(address(), q, on('host-a'));
    await until('harbor on host-a', async () => starts().length === 1);
    const orphan = starts()[0]!.pid as number;
    // Host a's reaper while the task waits for its next attempt: the orphan may still be adopted, so it stays. The
    // worker is up before a dies, and dies itself after three passes, long before the next attempt can be given to
    // it (heartbeat_timeout, then a 2 s backoff).
    const a2 = worker(address(), q, on('host-a'));
    await untilPolling(a2);
    a.kill('SIGKILL');
    await sleep(1_500);
    a2.kill('SIGKILL');
    expect(pidAlive(orphan)).toBe(true);
    // The next attempt runs on host b (no adoption across hosts: it starts a harbor of its own)…
    const b = worker(address(), q, on('host-b'));
    try {
      await until('harbor on host-b', async () => starts().length === 2, 60_000);
      expect(pidAlive(orphan)).toBe(true); // host b's reaper leaves host a's groups alone
      // …and host a's next worker stops the orphan, which would otherwise spend its 2 minutes for nothing.
      const a3 = worker(address(), q, on('host-a'));
      try {
        await until('the orphan stopped', async () => !pidAlive(orphan), 30_000);
        expect(a3.tail()).toMatch(/stopping an orphaned harbor .*attempt 2 of its task runs on \d+@host-b/);
      } finally {
        a3.kill('SIGTERM');
      }
      const r = (await handle.result()) as CandidateResult;
      expect(r).toMatchObject({ nScored: 1, score: 1 });
    } finally {
      b.kill('SIGTERM');
    }
  },
);

test.concurrent(
  'two servers on one host, same namespace and queue names: one server’s reaper never stops the other’s harbor, which its next worker adopts',
  async () => {
    // Server B (a server of its own, namespace `default` like the shared test server A) runs a 12 s trial.
    const b = await ownServerWithEvaluation('two-servers');
    const f = evalFixture({
      taskQueue: b.q,
      address: b.address,
      scenario: { tasks: { 'hello-world': { reward: 1, duration_ms: 12_000 } } },
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      tasks: { names: ['hello-world'] },
      execution: { concurrency: 1, heartbeat_timeout: '3s', task_attempts: 2 },
    });
    const groups = tempDir('vero-groups-');
    const host = { VERO_HOST_ID: 'one-host', VERO_HOST_GROUPS_DIR: groups, VERO_REAPER_INTERVAL_MS: '500' };
    const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
    const conn = await Connection.connect({ address: b.address });
    const cb = new Client({ connection: conn });
    const starts = () => invocations(f.invocationLog).filter((i) => i.event === 'start');
    try {
      const { handle } = await startOrAttach(cb, input, b.q);
      const wb = worker(b.address, b.q, host);
      await until('harbor started by B’s worker', async () => starts().length === 1);
      const harbor = starts()[0]!.pid as number;
      wb.kill('SIGKILL');
      // A worker of server A on the same host, the same queue name: its reaper sees B's orphan in the host's
      // record, and A has no such workflow. Several passes later the orphan still runs.
      const wa = worker(address(), b.q, host);
      try {
        await untilPolling(wa);
        await sleep(2_000);
        expect(pidAlive(harbor)).toBe(true);
        expect(wa.tail()).not.toMatch(/stopping an orphaned harbor/);
      } finally {
        wa.kill('SIGTERM');
      }
      // B's next worker adopts it: the task's harbor started once.
      const wb2 = worker(b.address, b.q, host);
      try {
        const r = (await handle.result()) as CandidateResult;
        expect(r).toMatchObject({ nScored: 1, score: 1 });
        expect(starts()).toHaveLength(1);
      } finally {
        wb2.kill('SIGTERM');
      }
    } finally {
      await conn.close();
      await b.stop();
    }
  },
);

/**
 * The slow scenario's rewards, with the two tasks the lanes start first (add-cli-flag, count-words) running 30 s,
 * the others 0.9 s: the harbors running at an outage are still running when the server is back.
 */
const spanningScenario = {
  tasks: {
    'add-cli-flag': { reward: 0, duration_ms: 30_000 },
    'count-words': { reward: 1, duration_ms: 30_000 },
    'hello-world': { reward: 1, duration_ms: 900 },
    'reverse-string': { reward: 0.5, duration_ms: 900 },
  },
  default: { reward: 0, duration_ms: 900 },
};

test.concurrent(
  'a server outage longer than heartbeat_timeout: running harbors are adopted by the retried attempts, none is stopped or re-run',
  async () => {
    const { q, f, address: addr, kill, restart, stop } = await ownServerWithEvaluation('outage', '1', spanningScenario);
    const input = await prepareEvalInput(loadEvalConfig(f.configFile, { 'execution.heartbeat_timeout': '3s' }), 'improved');
    const conn = await Connection.connect({ address: addr });
    const c = new Client({ connection: conn });
    await startOrAttach(c, input, q);
    const w = worker(addr, q);
    const starts = () => invocations(f.invocationLog).filter((i) => i.event === 'start');
    try {
      await until('two harbors running', async () => starts().length >= 2, 60_000);
      const spanning = starts();
      kill();
      await sleep(8_000); // well past the 3 s heartbeat timeout
      await restart();
      // The harbors running at the outage outlived it: the retried attempts find them running.
      for (const s of spanning) expect(pidAlive(s.pid)).toBe(true);
      const conn2 = await Connection.connect({ address: addr });
      try {
        const r = (await new Client({ connection: conn2 }).workflow.getHandle(input.evalId).result()) as CandidateResult;
        assertSameResult(r);
      } finally {
        await conn2.close();
      }
      // No harbor was stopped (exit 130) and none re-ran: each task's harbor started once.
      expect(invocations(f.invocationLog).filter((i) => i.event === 'end' && i.exit_code !== 0)).toEqual([]);
      expect(Object.values(runsPerTask(f.invocationLog)).every((n) => n === 1)).toBe(true);
    } finally {
      w.kill('SIGTERM');
      await conn.close().catch(() => undefined);
      await stop();
    }
  },
);
