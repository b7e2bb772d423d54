/**
 * Where a Harbor user looks for an evaluation's jobs: `vero jobs ID` lists its Harbor job dirs across its runs
 * (a retry adds a run, and a second job for the task it ran again), and `vero trials` given the evaluation's run
 * dir (`<home>/runs/<id>`, or one run's) finds those jobs and scores them as the evaluation did. A real
 * evaluation of the example agent with the Harbor stand-in, retried once.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { withTasks } from '../../client/eval-results';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { evalFixture } from '../helpers/fixtures';
import { conforming } from '../helpers/json-schema';
import { runVero } from '../helpers/process';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(240_000);

interface Job {
  task: string;
  runId: string;
  jobDir: string;
  nTrials: number;
  latest: boolean;
}

test("vero jobs lists an evaluation's job dirs across its runs; vero trials scores its run dir as the evaluation did", async () => {
  const q = uniqueQueue('jobs');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    tasks: { names: ['count-words', 'hello-world', 'sum-numbers'] },
    scenario: { tasks: { 'hello-world': [{ reward: 0 }, { reward: 1 }] }, default: { reward: 1 } },
  });
  const c = await client();
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  let result: CandidateResult | null = null;
  await withWorker(q, async () => {
    await (await startOrAttach(c, input, q)).handle.result();
    const retried = await runVero(['retry', input.evalId, '--task', 'hello-world', '--wait', '--json', '--address', address()]);
    expect(retried.code).toBe(0);
    result = withTasks((JSON.parse(retried.stdout) as { result: CandidateResult }).result);
  });
  const rows = result!.tasks!;

  const listed = await runVero(['jobs', input.evalId, '-c', f.configFile, '--json']);
  expect(listed.code).toBe(0);
  const { jobs } = conforming<{ jobs: Job[] }>('jobs', listed.stdout);
  expect(jobs.map((j) => [j.task, j.latest])).toEqual([
    ['count-words', true],
    ['hello-world', false],
    ['hello-world', true],
    ['sum-numbers', true],
  ]);
  expect(new Set(jobs.map((j) => j.runId)).size).toBe(2);
  // The latest job of each task is the one its row counts.
  for (const row of rows) expect([row.task, jobs.find((j) => j.task === row.task && j.latest)!.jobDir]).toEqual([row.task, row.jobDir]);
  for (const j of jobs) expect(fs.existsSync(path.join(j.jobDir, 'config.json')) && j.nTrials).toBe(1);
  const text = await runVero(['jobs', input.evalId, '--home', f.home]);
  expect(text.stdout).toMatch(/hello-world .*replaced/);
  expect((await runVero(['jobs', 'eval-nope', '--home', f.home])).code).toBe(2);

  // vero trials on the evaluation's runs dir: each task's latest job, scored as the evaluation scored it.
  const runsDir = path.join(f.home, 'runs', input.evalId);
  const trials = await runVero(['trials', runsDir, '--json']);
  expect(trials.code).toBe(0);
  const scored = conforming<{ tasks: { task: string; score: number }[] }>('trials', trials.stdout).tasks;
  expect(scored.map((t) => [t.task, t.score])).toEqual(rows.map((r) => [r.task, r.score]));
  expect(scored.find((t) => t.task === 'hello-world')!.score).toBe(1);
  // And on one run's dir: that run's jobs (the first run has all three, hello-world's first reward).
  const firstRun = jobs.find((j) => j.task === 'hello-world' && !j.latest)!.runId;
  const one = await runVero(['trials', path.join(runsDir, firstRun), '--json']);
  const firstRows = conforming<{ tasks: { task: string; score: number }[] }>('trials', one.stdout).tasks;
  expect(firstRows.map((t) => [t.task, t.score])).toEqual([
    ['count-words', 1],
    ['hello-world', 0],
    ['sum-numbers', 1],
  ]);
});
