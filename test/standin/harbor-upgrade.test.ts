/**
 * Harbor upgraded under a running evaluation: a task's job dir begun by Harbor 0.25 is resumed by a worker whose
 * Harbor is 0.26 (the stand-in imitating each, HARBOR_STANDIN_VERSION switched between the two runs of the task).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { activityRun } from '../helpers/activity-run';

jest.setTimeout(60_000);

const previous = process.env.HARBOR_STANDIN_VERSION;
afterAll(() => {
  if (previous === undefined) delete process.env.HARBOR_STANDIN_VERSION;
  else process.env.HARBOR_STANDIN_VERSION = previous;
});

test('a job dir begun by Harbor 0.25 and resumed by a worker on 0.26 keeps its scored trials, with a note saying why', async () => {
  const { runDir, attempt } = await activityRun({ harbor: { n_attempts: 2 }, tasks: { names: ['hello-world'] } }, 'vero-upgrade-');
  const resultOf = (trial: string) => fs.readFileSync(path.join(runDir, 'jobs', 'hello-world', trial, 'result.json'), 'utf8');

  process.env.HARBOR_STANDIN_VERSION = '0.25.0';
  const before = await attempt('hello-world');
  expect(before).toMatchObject({ status: 'scored', nTrials: 2, harborVersion: '0.25.0', notes: [] });
  // The worker died before the second trial finished: its dir holds no result (a resume deletes such a dir).
  const [kept, unfinished] = fs
    .readdirSync(before.jobDir)
    .filter((d) => d.startsWith('hello-world__'))
    .sort((a, b) => (a === before.trial ? -1 : b === before.trial ? 1 : 0));
  fs.rmSync(path.join(before.jobDir, unfinished!, 'result.json'));
  const keptResult = resultOf(kept!);

  process.env.HARBOR_STANDIN_VERSION = '0.26.0';
  const after = await attempt('hello-world');
  expect(after).toMatchObject({ status: 'scored', score: 1, nTrials: 2 });
  expect(after.notes).toEqual([
    expect.stringMatching(
      /^the job was begun by Harbor 0\.25\.0 and resumed by Harbor 0\.26 or later .*: its 1 earlier trial\(s\) are kept, .*; 1 trial\(s\) ran on the newer Harbor$/,
    ),
  ]);
  expect(resultOf(kept!)).toBe(keptResult); // the scored trial of 0.25, as it was
  const rerun = fs.readdirSync(after.jobDir).filter((d) => d.startsWith('hello-world__') && d !== kept);
  expect(rerun).toHaveLength(1);
  expect(JSON.parse(resultOf(rerun[0]!))).toMatchObject({ schema_version: 1, reward_valid: true });
  expect(fs.existsSync(path.join(runDir, 'stale-jobs'))).toBe(false);
});
