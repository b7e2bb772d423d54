import * as fs from 'node:fs';
import { isTrialResult } from '../../model/harbor/result';
import { TrialResult } from '../../model/harbor/schemas';
import * as path from 'node:path';
import { collate, jobDirsWithoutResults, loadTrials, TaskNameMismatchError } from '../../harbor/collate';
import { ROOT, tempDir } from '../helpers/fixtures';
import { spawnSync } from 'node:child_process';

function writeTrial(jobs: string, job: string, trialName: string, body: Record<string, unknown> | string): void {
  const dir = path.join(jobs, job, trialName);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'result.json'), typeof body === 'string' ? body : JSON.stringify(body));
}

function jobDir(jobs: string, job: string): void {
  fs.mkdirSync(path.join(jobs, job), { recursive: true });
  fs.writeFileSync(path.join(jobs, job, 'config.json'), '{}');
  fs.writeFileSync(path.join(jobs, job, 'lock.json'), '{}');
  // The job-level result has no task_name: it must never be read as a trial.
  fs.writeFileSync(
    path.join(jobs, job, 'result.json'),
    JSON.stringify({ id: 'x', started_at: '2026-01-01T00:00:00', n_total_trials: 1, stats: {} }),
  );
}

const trial = (task: string, name: string, rewards: Record<string, number> | null, finished = '2026-08-22T12:00:00Z') => ({
  task_name: `org/${task}`,
  trial_name: name,
  task_id: { path: `/data/ds/${task}` },
  verifier_result: rewards ? { rewards } : null,
  exception_info: rewards
    ? null
    : { exception_type: 'RuntimeError', exception_message: 'boom', exception_traceback: '', occurred_at: finished },
  finished_at: finished,
});

test('reads trials of several jobs, keys them by task dir name, skips the job-level result, reports bad files', () => {
  const jobs = tempDir();
  jobDir(jobs, 'j1');
  jobDir(jobs, 'j2');
  writeTrial(jobs, 'j1', 'alpha__AAAAAAA', trial('alpha', 'alpha__AAAAAAA', { reward: 1 }));
  writeTrial(jobs, 'j2', 'alpha__BBBBBBB', trial('alpha', 'alpha__BBBBBBB', null, '2026-08-23T00:00:00Z'));
  writeTrial(jobs, 'j2', 'beta__CCCCCCC', trial('beta', 'beta__CCCCCCC', { pass: 0, reward: 1 }));
  writeTrial(jobs, 'j2', 'gamma__DDDDDDD', '{"task_name": "org/gamma", "trial_na');
  writeTrial(
    jobs,
    'j2',
    'delta__EEEEEEE',
    JSON.stringify({ ...trial('delta', 'delta__EEEEEEE', null), verifier_result: { rewards: { reward: 'high' } } }),
  );
  fs.mkdirSync(path.join(jobs, 'j2', 'running__FFFFFFF')); // no result.json yet
  const loaded = loadTrials(jobs);
  expect(loaded.trials.map((t) => t.result.trial_name).sort()).toEqual(['alpha__AAAAAAA', 'alpha__BBBBBBB', 'beta__CCCCCCC']);
  expect(loaded.invalid.map((i) => path.basename(path.dirname(i.file))).sort()).toEqual(['delta__EEEEEEE', 'gamma__DDDDDDD']);
  const rows = collate(loaded.trials);
  expect(rows.map((r) => [r.task, r.status, r.score, r.trial, r.taskName])).toEqual([
    ['alpha', 'scored', 1, 'alpha__AAAAAAA', 'org/alpha'],
    ['beta', 'scored', 0, 'beta__CCCCCCC', 'org/beta'],
  ]);
  // A single job dir works too.
  expect(loadTrials(path.join(jobs, 'j1')).trials).toHaveLength(1);
});

test('requested tasks without trials are error rows; a total name mismatch raises', () => {
  const jobs = tempDir();
  jobDir(jobs, 'j');
  writeTrial(jobs, 'j', 'alpha__AAAAAAA', trial('alpha', 'alpha__AAAAAAA', { reward: 1 }));
  const { trials } = loadTrials(jobs);
  expect(collate(trials, { requested: ['alpha', 'missing'] }).map((r) => [r.task, r.status, r.score])).toEqual([
    ['alpha', 'scored', 1],
    ['missing', 'error', null],
  ]);
  expect(() => collate(trials, { requested: ['org/alpha'] })).toThrow(TaskNameMismatchError);
  expect(() => collate(trials, { requested: ['org/alpha'] })).toThrow(/none matches the requested task name/);
  expect(collate([], { requested: ['alpha'] })[0]).toMatchObject({ status: 'error', error: 'no trial result' });
});

test('the fast trial check agrees with the TrialResult schema, case by case', () => {
  const ok = { task_name: 't', trial_name: 't__a' };
  const cases: unknown[] = [
    ok,
    null,
    [],
    'x',
    { trial_name: 'x' },
    { ...ok, id: null },
    { ...ok, id: 'i' },
    { ...ok, task_id: { path: '/p' } },
    { ...ok, task_id: { org: 'o', name: 'n', ref: null } },
    { ...ok, task_id: { org: 'o' } },
    { ...ok, task_id: null },
    { ...ok, source: null },
    { ...ok, source: 3 },
    { ...ok, config: null },
    { ...ok, config: { task: { path: null } } },
    { ...ok, config: { task: { path: 3 } } },
    { ...ok, config: { other: 1 } },
    { ...ok, verifier_result: null },
    { ...ok, verifier_result: { rewards: null } },
    { ...ok, verifier_result: { rewards: { a: 1, b: 0.5 } } },
    { ...ok, verifier_result: { rewards: { a: '1' } } },
    { ...ok, verifier_result: { rewards: { a: Infinity } } },
    { ...ok, verifier_result: [] },
    { ...ok, exception_info: { exception_type: 'E', exception_message: null, occurred_at: 'x' } },
    { ...ok, exception_info: { exception_message: 'm' } },
    { ...ok, exception_info: { exception_type: 'E', exception_traceback: 3 } },
    { ...ok, agent_result: { cost_usd: 0.1, n_input_tokens: null } },
    { ...ok, agent_result: { cost_usd: '0.1' } },
    { ...ok, agent_result: null },
    { ...ok, started_at: null, finished_at: '2026-01-01T00:00:00Z' },
    { ...ok, finished_at: 5 },
    { ...ok, schema_version: 1 },
    { ...ok, schema_version: 2 },
    { ...ok, schema_version: '1' },
    { ...ok, reward_valid: false },
    { ...ok, reward_valid: null },
    { ...ok, reward_valid: 'no' },
    { ...ok, exception_info: { exception_type: 'E', policy: { should_retry: true, should_grade: true, has_valid_reward: false } } },
    { ...ok, exception_info: { exception_type: 'E', policy: null } },
    { ...ok, exception_info: { exception_type: 'E', policy: { has_valid_reward: 'no' } } },
    { ...ok, exception_info: { exception_type: 'E', policy: [] } },
  ];
  for (const c of cases) expect({ c, fast: isTrialResult(c) }).toEqual({ c, fast: TrialResult.safeParse(c).success });
});

test('a task whose every result.json is unreadable is an error row naming the file and the reason, never a dropped row', () => {
  const jobs = tempDir();
  jobDir(jobs, 'j');
  writeTrial(jobs, 'j', 'ok__AAAAAAA', trial('ok', 'ok__AAAAAAA', { reward: 1 }));
  writeTrial(jobs, 'j', 'garbled__BBBBBBB', '{"task_name": ');
  writeTrial(jobs, 'j', 'mixed__CCCCCCC', trial('mixed', 'mixed__CCCCCCC', { reward: 0.5 }));
  writeTrial(jobs, 'j', 'mixed__DDDDDDD', 'garbage');
  const loaded = loadTrials(jobs);
  expect(loaded.invalid).toHaveLength(2);
  const rows = collate(loaded.trials, { invalid: loaded.invalid });
  expect(rows.map((r) => [r.task, r.status, r.score])).toEqual([
    ['garbled', 'error', null],
    ['mixed', 'scored', 0.5],
    ['ok', 'scored', 1],
  ]);
  expect(rows[0]!.error).toBe(
    `unreadable result.json: ${path.join(jobs, 'j', 'garbled__BBBBBBB', 'result.json')}: not valid JSON (truncated or garbage)`,
  );
  // The same row when the task was asked for by name (the evaluation's path).
  expect(collate(loaded.trials, { requested: ['garbled'], invalid: loaded.invalid })[0]!.error).toBe(rows[0]!.error);
});

test('a loaded trial keeps the fields scoring reads; whole results only when asked (the views)', () => {
  const jobs = tempDir();
  jobDir(jobs, 'j');
  const full = {
    ...trial('alpha', 'alpha__AAAAAAA', { reward: 1 }),
    config: { task: { path: '/data/ds/alpha' }, agent: { name: 'big' } },
    agent_result: { cost_usd: 0.5, n_input_tokens: 10, n_output_tokens: 2, n_cache_tokens: null, metadata: { rollout: 'x'.repeat(1000) } },
    agent_execution: { started_at: '2026-08-22T11:00:00Z', finished_at: '2026-08-22T11:30:00Z' },
  };
  writeTrial(jobs, 'j', 'alpha__AAAAAAA', full);
  expect(loadTrials(jobs).trials[0]!.result).toEqual({
    task_name: 'org/alpha',
    trial_name: 'alpha__AAAAAAA',
    task_id: { path: '/data/ds/alpha' },
    config: { task: { path: '/data/ds/alpha' } },
    verifier_result: { rewards: { reward: 1 } },
    exception_info: null,
    agent_result: { cost_usd: 0.5, n_input_tokens: 10, n_output_tokens: 2, n_cache_tokens: null },
    finished_at: '2026-08-22T12:00:00Z',
  });
  expect(loadTrials(jobs, { whole: true }).trials[0]!.result).toEqual(full);
});

test('vero trials: every job dir is a row or a named skip (a crashed or empty job dir is never dropped silently)', () => {
  const jobs = tempDir();
  for (const t of ['a', 'b', 'c', 'd', 'e']) {
    jobDir(jobs, `job-${t}`);
    writeTrial(jobs, `job-${t}`, `${t}__AAAAAAA`, trial(t, `${t}__AAAAAAA`, { reward: 1 }));
  }
  jobDir(jobs, 'job-empty'); // harbor stopped before its first trial
  jobDir(jobs, 'job-crashed');
  fs.mkdirSync(path.join(jobs, 'job-crashed', 'f__AAAAAAA', 'agent'), { recursive: true }); // no result.json
  expect(jobDirsWithoutResults(jobs).map((s) => path.basename(s.jobDir))).toEqual(['job-crashed', 'job-empty']);
  const vero = (args: string[]) => spawnSync(path.join(ROOT, 'bin', 'vero'), args, { encoding: 'utf8' });
  const text = vero(['trials', jobs]);
  expect(text.status).toBe(0);
  expect(text.stdout).toMatch(/5 task\(s\), 5 scored.*2 job dir\(s\) without any result\.json/);
  expect(text.stderr).toContain(`no row for ${path.join(jobs, 'job-empty')}: a Harbor job dir without trial dirs`);
  expect(text.stderr).toContain(`no row for ${path.join(jobs, 'job-crashed')}: a Harbor job dir whose 1 trial dir(s) have no result.json`);
  const json = JSON.parse(vero(['trials', jobs, '--json']).stdout) as { tasks: unknown[]; skippedJobDirs: { jobDir: string }[] };
  expect(json.tasks).toHaveLength(5);
  expect(json.skippedJobDirs.map((s) => s.jobDir)).toEqual([path.join(jobs, 'job-crashed'), path.join(jobs, 'job-empty')]);
});
