/**
 * Graceful worker shutdown: SIGTERM drains (the running harbor run finishes and is reported), then the worker exits 0.
 * Each scenario has its own task queue and worker processes: they run concurrently.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { evalFixture, invocations, ROOT, runsPerTask } from '../helpers/fixtures';
import { spawnWorker, until } from '../helpers/process';
import { address, client, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(120_000);

test.concurrent('SIGTERM: the worker finishes its running harbor run, reports it, and exits 0; nothing is re-run', async () => {
  const q = uniqueQueue('drain');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: { default: { reward: 1, duration_ms: 3000 } },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    tasks: { names: ['hello-world'] },
  });
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  const { handle } = await startOrAttach(await client(), input, q);
  const first = spawnWorker(address(), q);
  const exited = new Promise<number | null>((r) => first.proc.on('exit', (code) => r(code)));
  await until('harbor to start', async () => invocations(f.invocationLog).some((x) => x.event === 'start'));
  first.proc.kill('SIGTERM');
  expect(await exited).toBe(0);
  // The harbor run was allowed to finish (not killed) before the worker left.
  const end = invocations(f.invocationLog).find((x) => x.event === 'end');
  expect(end).toMatchObject({ exit_code: 0 });
  const second = spawnWorker(address(), q);
  try {
    const r = (await handle.result()) as CandidateResult;
    expect(r).toMatchObject({ nScored: 1, score: 1 });
    expect(r.tasks![0]!.runs).toBe(1);
  } finally {
    second.kill('SIGTERM');
  }
  expect(runsPerTask(f.invocationLog)['hello-world']).toBe(1);
});

test.concurrent(
  'SIGTERM past --shutdown-grace: the running harbor is left running, not stopped, and the next worker adopts it (one harbor run)',
  async () => {
    const q = uniqueQueue('detach');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      scenario: { default: { reward: 1, duration_ms: 8000 } },
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      tasks: { names: ['hello-world'] },
      execution: { heartbeat_timeout: '3s' },
    });
    const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
    const { handle } = await startOrAttach(await client(), input, q);
    const first = spawnWorker(address(), q, {}, ['--shutdown-grace', '1s']);
    const exited = new Promise<number | null>((r) => first.proc.on('exit', (code) => r(code)));
    await until('harbor to start', async () => invocations(f.invocationLog).some((x) => x.event === 'start'));
    first.proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The worker left after its grace; its harbor was not stopped (no end yet, and it ends by itself, exit 0).
    expect(invocations(f.invocationLog).filter((x) => x.event === 'end')).toEqual([]);
    expect(first.tail(100_000)).toMatch(/harbor left running for the next attempt to adopt[\s\S]*this worker is shutting down/);
    const second = spawnWorker(address(), q);
    try {
      const r = (await handle.result()) as CandidateResult;
      expect(r).toMatchObject({ nScored: 1, score: 1 });
      expect((r.tasks![0]!.notes ?? []).join('\n')).toMatch(/adopted the running harbor/);
    } finally {
      second.kill('SIGTERM');
    }
    expect(runsPerTask(f.invocationLog)['hello-world']).toBe(1);
    expect(invocations(f.invocationLog).find((x) => x.event === 'end')).toMatchObject({ exit_code: 0 });
  },
);

test.concurrent('VERO_LOG_FORMAT=json: the worker logs one JSON object per line', async () => {
  const q = uniqueQueue('jsonlog');
  const p = spawn(path.join(ROOT, 'bin', 'vero'), ['worker', '--address', address(), '--task-queue', q], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, VERO_LOG_FORMAT: 'json', VERO_LOG_LEVEL: 'INFO' },
  });
  let err = '';
  p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await until('the worker to run', async () => err.includes('RUNNING'));
  const exited = new Promise((r) => p.on('exit', r));
  p.kill('SIGTERM');
  await exited;
  const lines = err.split('\n').filter(Boolean);
  expect(lines.every((l) => l.startsWith('{'))).toBe(true);
  const states = lines
    .map((l) => JSON.parse(l) as { level: string; message: string; state?: string; taskQueue?: string })
    .filter((e) => e.message === 'Worker state changed');
  expect(states.map((s) => s.state)).toEqual(expect.arrayContaining(['RUNNING', 'STOPPED']));
  expect(states[0]).toMatchObject({ level: 'INFO', taskQueue: q });
});
