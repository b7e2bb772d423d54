/**
 * `vero status` while a `vero retry` runs shows the whole evaluation: the tasks finished in the first run (their
 * rows, from Temporal) plus the retried task's progress, not the retried task alone. Real dev server, real
 * worker, the Harbor stand-in.
 */
import { retryTasks } from '../../client/retry';
import { getProgress } from '../../client/running-eval';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { conforming } from '../helpers/json-schema';
import { retryFixture, startEvaluation } from '../helpers/evaluation';
import { runVero, until } from '../helpers/process';
import { address } from '../helpers/temporal';

jest.setTimeout(180_000);

test('while a retry runs, status counts the first run’s finished tasks and the retried one’s progress', async () => {
  // sum-numbers fails its first run (an error row); run again, it takes 30 s (long enough for two `vero status` runs on
  // a loaded machine) and scores.
  const { f, w } = retryFixture(
    'retry-status',
    {
      tasks: { 'sum-numbers': [{ exception: 'RuntimeError' }, { reward: 1, duration_ms: 30_000 }], 'hello-world': { reward: 0 } },
      default: { reward: 1 },
    },
    { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
  );
  try {
    const { c, input, handle } = await startEvaluation(f.configFile);
    expect((await handle.result()) as CandidateResult).toMatchObject({ nTasks: 3, nScored: 2, nErrors: 1 });

    await retryTasks(c, input.evalId, { errors: true });
    await until('the retried task running', async () => (await getProgress(c, input.evalId)).running === 1);
    const conn = ['--address', address()];
    const json = conforming<{
      workflowStatus: string;
      progress: { total: number; done: number; running: number; errors: number; scored: number };
    }>('status', (await runVero(['status', input.evalId, '--json', ...conn])).stdout);
    // count-words and hello-world finished in the first run; sum-numbers (the error row) is running again.
    expect(json).toMatchObject({ workflowStatus: 'RUNNING', progress: { total: 3, done: 2, running: 1, errors: 0, scored: 2 } });
    const text = await runVero(['status', input.evalId, ...conn]);
    expect(text.stdout).toMatch(/running: 2\/3 done, 1 running, 0 errors/);

    const final = (await c.workflow.getHandle(input.evalId).result()) as CandidateResult;
    expect(final).toMatchObject({ nTasks: 3, nScored: 3, nErrors: 0 });
    expect((await getProgress(c, input.evalId)).done).toBe(3);
  } catch (e) {
    throw new Error(`${(e as Error).message}\nworker log:\n${w.tail()}`);
  } finally {
    w.kill('SIGTERM');
  }
});
