/**
 * One task row (model/evaluation/task-result.ts): the collated row of `vero trials` and the stored result are the one
 * schema's row, in its field order, with nothing of their own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { collate, collatedRow, loadTrials } from '../../harbor/collate';
import { errorRow, inRowOrder, notRunRow, TaskRowJson, type TaskResult } from '../../model/evaluation/task-result';
import { tempDir } from '../helpers/fixtures';

const FIELDS = Object.keys(TaskRowJson.shape);
/** Whether `keys` are schema fields, in the schema's order. */
const inSchemaOrder = (keys: string[]) =>
  keys.every((k, i) => FIELDS.indexOf(k) >= 0 && (i === 0 || FIELDS.indexOf(k) > FIELDS.indexOf(keys[i - 1]!)));

function jobWith(rewards: (number | null)[]): string {
  const job = path.join(tempDir(), 'hello');
  fs.mkdirSync(job);
  for (const f of ['config.json', 'lock.json']) fs.writeFileSync(path.join(job, f), '{}');
  rewards.forEach((r, i) => {
    const dir = path.join(job, `hello__t${i}`);
    fs.mkdirSync(dir, { recursive: true });
    const exception =
      r === null
        ? { exception_type: 'RuntimeError', exception_message: 'boom', exception_traceback: '', occurred_at: '2026-08-22T12:00:00Z' }
        : null;
    fs.writeFileSync(
      path.join(dir, 'result.json'),
      JSON.stringify({
        task_name: 'org/hello',
        trial_name: `hello__t${i}`,
        task_id: { path: '/data/ds/hello' },
        verifier_result: r === null ? null : { rewards: { reward: r } },
        exception_info: exception,
        finished_at: `2026-08-22T12:00:0${i}Z`,
      }),
    );
  });
  return job;
}

test("a collated row is the schema's row, in its order: the scoring fields of a task, no ranking counts", () => {
  const job = jobWith([1, 0.5, null]);
  const [task] = collate(loadTrials(job).trials, { requested: ['hello'] });
  const row = collatedRow(task!, job);
  expect(TaskRowJson.parse(row)).toEqual(row);
  expect(inSchemaOrder(Object.keys(row))).toBe(true);
  expect(row).toEqual({
    task: 'hello',
    status: 'scored',
    score: 0.5,
    metrics: task!.metrics,
    trial: 'hello__t1', // the later of the clean trials (model/harbor/trial-ranking.ts)
    taskName: 'org/hello',
    nTrials: 3,
    exceptions: ['RuntimeError'],
    jobDir: job,
    error: null,
    usage: { costUsd: null, inputTokens: null, outputTokens: null, cacheTokens: null },
    trialRewards: [1, 0.5],
  });
});

test("a stored result is the collated row with the run's fields, written in the schema's order", () => {
  const job = jobWith([0]);
  const [task] = collate(loadTrials(job).trials, { requested: ['hello'] });
  const stored: TaskResult = inRowOrder({ ...collatedRow(task!, job), runs: 2, timedOut: false, harborVersion: '0.26.0', notes: [] });
  expect(TaskRowJson.parse(stored)).toEqual(stored);
  expect(Object.keys(stored)).toEqual(FIELDS.filter((k) => k in stored));
  expect(stored.runs).toBe(2);
  for (const r of [errorRow('t', 'boom', 3, '/jobs/t'), notRunRow('t', 'cap', '/jobs')]) {
    expect(TaskRowJson.parse(r)).toEqual(r);
    expect(inSchemaOrder(Object.keys(r))).toBe(true);
  }
});
