/**
 * `vero retry` of an evaluation of more than INLINE_TASK_LIMIT tasks (its result's rows are not inline) when the
 * result file is not on the host: the rows come from Temporal (the chunks' histories), for choosing what to retry
 * and for the retry's finalize, which writes the whole evaluation again. Harbor-facing activities replaced (every
 * task returns its row at once); the workflows, the results activities and the dev server are real.
 */
import * as fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { RunTaskInput } from '../../activities/run-task';
import { retryTasks } from '../../client/retry';
import { INLINE_TASK_LIMIT, type CandidateResult } from '../../model/evaluation/candidate-result';
import type { TaskResult } from '../../model/evaluation/task-result';
import { evaluateCandidate } from '../../workflows';
import { until } from '../helpers/process';
import { mockedHarborWorker, mockedSettings, scoredRow } from '../helpers/mocked-harbor';
import { client } from '../helpers/temporal';

jest.setTimeout(180_000);

const COMMIT = 'b'.repeat(40);

test('a retry of an evaluation of more tasks than travel inline, its result file gone: rows from Temporal, only the error row runs again', async () => {
  const prefix = `t${randomUUID().slice(0, 6)}-`;
  const tasks = Array.from({ length: INLINE_TASK_LIMIT + 1 }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
  const failing = tasks[7]!;
  const runs: Record<string, number> = {};
  const runTask = async (input: RunTaskInput): Promise<TaskResult> => {
    runs[input.task] = (runs[input.task] ?? 0) + 1;
    const error = input.task === failing && runs[input.task] === 1;
    const row = scoredRow(input.task, 1, input);
    if (!error) return row;
    return { ...row, status: 'error', score: null, metrics: {}, exceptions: ['RuntimeError'], error: 'RuntimeError: the first run failed' };
  };
  const settings = mockedSettings({
    concurrency: 16,
    taskAttempts: 1,
    chunkSize: 400,
    // One chunk per run of the parent: the first run continues as new twice, its rows spread over three runs.
    chunksPerRun: 1,
  });
  const { q, worker, connection, input } = await mockedHarborWorker({
    name: 'retry-large',
    commit: COMMIT,
    candidateRef: 'large',
    tasks,
    settings,
    runTask,
  });
  const c = await client();
  try {
    await worker.runUntil(async () => {
      const first = (await c.workflow.execute(evaluateCandidate, {
        workflowId: input.evalId,
        taskQueue: q,
        args: [input],
      })) as CandidateResult;
      expect(first).toMatchObject({ nTasks: tasks.length, nErrors: 1, tasks: null });
      await until('the first run continued as new twice (its chunks in three runs)', async () => {
        let continued = 0;
        for await (const e of c.workflow.list({ query: `WorkflowId = '${input.evalId}'` }))
          if (e.status.name === 'CONTINUED_AS_NEW') continued++;
        return continued === 2;
      });
      // Share-nothing: neither the host asking for the retry nor the one finalizing it has the first run's file.
      fs.rmSync(first.resultFile);
      const started = await retryTasks(c, input.evalId, { errors: true });
      expect(started.tasks).toEqual([failing]);
      const final = (await c.workflow.getHandle(input.evalId).result()) as CandidateResult;
      expect(final).toMatchObject({
        status: 'completed',
        nTasks: tasks.length,
        nScored: tasks.length,
        nErrors: 0,
        startedAt: first.startedAt,
      });
      expect(final.retries).toEqual([{ at: started.requestedAt, tasks: [failing] }]);
      const file = JSON.parse(fs.readFileSync(final.resultFile, 'utf8')) as CandidateResult;
      expect(file.tasks!.map((t) => t.task)).toEqual(tasks);
      expect(file.tasks!.find((t) => t.task === failing)).toMatchObject({
        status: 'scored',
        retried: { at: started.requestedAt, previous: { status: 'error' } },
      });
      expect(file.tasks!.filter((t) => t.retried)).toHaveLength(1);

      // Again, the retry's own file gone too: the rows are the first run's with the retry's merged in.
      fs.rmSync(final.resultFile);
      const again = await retryTasks(c, input.evalId, { tasks: [tasks[3]!] });
      const last = (await c.workflow.getHandle(input.evalId).result()) as CandidateResult;
      expect(last).toMatchObject({ nTasks: tasks.length, nScored: tasks.length, nErrors: 0 });
      expect(last.retries!.map((r) => r.tasks)).toEqual([[failing], [tasks[3]]]);
      const rows = (JSON.parse(fs.readFileSync(last.resultFile, 'utf8')) as CandidateResult).tasks!;
      expect(rows.find((t) => t.task === failing)).toMatchObject({ status: 'scored', retried: { at: started.requestedAt } });
      expect(rows.find((t) => t.task === tasks[3])).toMatchObject({ retried: { at: again.requestedAt } });
    });
    // Only the error row and the named task ran again.
    expect(Object.values(runs).reduce((a, n) => a + n, 0)).toBe(tasks.length + 2);
  } finally {
    await connection.close();
    await c.connection.close();
  }
});
