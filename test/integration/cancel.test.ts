/**
 * A cancel takes effect in seconds: every harbor of the evaluation is stopped soon after the cancel is
 * requested (not at the next throttled heartbeat, 0.8 × heartbeat_timeout later, nor by the orphan reaper), also
 * after a concurrency raise and with lanes granted across chunks; and the evaluation is CANCELLED only once no
 * harbor of it runs. Real dev server, real worker, the stand-in (tasks that would run for a minute). Each case has
 * its own fixture, task queue and worker, and mostly waits on its harbors: they run side by side.
 */
import { getProgress, setConcurrency } from '../../client/running-eval';
import { evalFixture, invocations } from '../helpers/fixtures';
import { startEvaluation } from '../helpers/evaluation';
import { pidAlive, sleep, until } from '../helpers/process';
import { address, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(180_000);

const startedPids = (log: string) =>
  invocations(log)
    .filter((i) => i.event === 'start')
    .map((i) => i.pid);

const cases: [string, Record<string, unknown>, boolean][] = [
  ['concurrency 3', { concurrency: 3 }, false],
  ['concurrency raised from 1 to 3', { concurrency: 1 }, true],
  ['concurrency 3, chunks of 1 (lanes granted across chunks)', { concurrency: 3, chunk_size: 1 }, false],
];

test.concurrent.each(cases)(
  'a cancel stops every harbor within seconds, and CANCELLED means none runs: %s',
  async (_name, execution, raise) => {
    const q = uniqueQueue('cancel');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario: { default: { reward: 1, duration_ms: 60_000 } },
      // The default heartbeat timeout: heartbeats are throttled to 0.8 × it (48 s) unless the worker says otherwise.
      execution: { heartbeat_timeout: '60s', stop_grace: '10s', ...execution },
    });
    await withWorker(q, async () => {
      const { c, input, handle } = await startEvaluation(f.configFile);
      await until('the first harbor', () => startedPids(f.invocationLog).length >= 1);
      if (raise) {
        await until('the task to run', async () => (await getProgress(c, input.evalId).catch(() => null))?.running === 1);
        await setConcurrency(c, input.evalId, 3);
      }
      await until('three harbors', () => startedPids(f.invocationLog).length >= 3);
      await sleep(6000); // their first heartbeats are behind them: a cancel waits for a later one
      const pids = startedPids(f.invocationLog);
      const cancelledAt = Date.now();
      await handle.cancel();
      // Whenever the evaluation says CANCELLED, no harbor of it runs.
      const closed = handle.result().then(
        () => 'completed',
        () => {
          const alive = pids.filter(pidAlive);
          return alive.length ? `closed with harbors running: ${alive.join(', ')}` : 'closed';
        },
      );
      await until('every harbor to stop', () => !pids.some(pidAlive), 40_000);
      const stoppedAfterMs = Date.now() - cancelledAt;
      expect(await closed).toBe('closed');
      expect((await handle.describe()).status.name).toBe('CANCELLED');
      // Seconds, not the throttled heartbeat (48 s) or the orphan reaper (60 s); the stand-in tears down at once.
      expect(stoppedAfterMs).toBeLessThan(15_000);
    });
  },
);
