/**
 * `temporal workflow terminate` of an evaluation or of one of its chunks: the server answers the running
 * attempts' heartbeats with "not found", they leave their harbors for a next attempt that never comes, and the
 * worker's orphan reaper stops them at once (it looks as soon as a harbor is left, not at its next pass). The
 * reaper's periodic pass is set far off here, so only that prompt look can stop them in the test's bound.
 */
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { chunkWorkflowId } from '../../model/paths';
import { evalFixture, invocations } from '../helpers/fixtures';
import { pidAlive, spawnWorker, until } from '../helpers/process';
import { address, client, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(180_000);

test.concurrent.each([['an evaluation'], ['a chunk']])(
  'terminating %s: its running harbors stop, not only at the reaper’s next pass',
  async (what) => {
    const q = uniqueQueue('terminate');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      tasks: { names: ['count-words', 'hello-world'] },
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      scenario: { default: { reward: 1, duration_ms: 120_000 } },
      execution: { concurrency: 2 },
    });
    const w = spawnWorker(address(), q, { VERO_REAPER_INTERVAL_MS: '3600000' });
    try {
      const c = await client();
      const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
      await startOrAttach(c, input, q);
      const pids = await until('both harbors', async () => {
        const started = invocations(f.invocationLog).filter((i) => i.event === 'start');
        return started.length === 2 && started.map((i) => i.pid);
      });
      const target = what === 'a chunk' ? chunkWorkflowId(input.evalId, 0) : input.evalId;
      await c.workflow.getHandle(target).terminate('test: terminated');
      await until('the terminated workflow’s harbors to stop', async () => !pids.some(pidAlive), 45_000);
      if (what === 'a chunk')
        await c.workflow
          .getHandle(input.evalId)
          .terminate('test over')
          .catch(() => undefined);
    } catch (e) {
      throw new Error(`${(e as Error).message}\nworker log:\n${w.tail()}`);
    } finally {
      w.kill('SIGTERM');
    }
  },
);
