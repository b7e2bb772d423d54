/**
 * `vero query` on real results: one evaluation by the Harbor stand-in on the dev server (trials with rewards,
 * exceptions, costs, an error row), queried through the CLI as a user runs it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { evalFixture, type EvalFixture } from '../helpers/fixtures';
import { conforming } from '../helpers/json-schema';
import { runVero } from '../helpers/process';
import { address, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(180_000);

let f: EvalFixture;
let evalId: string;
const query = (...args: string[]) => runVero(['query', '-c', f.configFile, ...args]);
const rowsOf = async (sql: string) => {
  const r = await query('--json', sql);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return conforming<{ columns: string[]; rows: unknown[][]; truncated: boolean }>('query', r.stdout);
};

beforeAll(async () => {
  const q = uniqueQueue('query');
  f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { n_attempts: 2 },
    execution: { task_attempts: 1 },
    scenario: {
      tasks: {
        'hello-world': [
          { rewards: { reward: 0, pass: 0 }, cost_usd: 0.1 },
          { rewards: { reward: 1, pass: 1 }, cost_usd: 0.2 },
        ],
        'count-words': { exception: 'AgentTimeoutError', reward: 0.5, cost_usd: 0.1 },
        'sum-numbers': { reward_file: 'missing' },
      },
      default: { reward: 0, cost_usd: 0.05 },
    },
  });
  await withWorker(q, async () => {
    const r = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait', '--json']);
    evalId = (JSON.parse(r.stdout) as CandidateResult).evalId;
  });
});

test('tasks, rewards, trials and errors of a real evaluation, as rows', async () => {
  const tasks = await rowsOf(`SELECT task, status, score, n_trials FROM tasks WHERE eval_id = '${evalId}' ORDER BY task`);
  expect(tasks.columns).toEqual(['task', 'status', 'score', 'n_trials']);
  expect(tasks.rows).toEqual([
    ['add-cli-flag', 'scored', 0, 2],
    ['count-words', 'scored', 0.5, 2],
    ['fix-csv-parser', 'scored', 0, 2],
    ['hello-world', 'scored', 1, 2],
    ['reverse-string', 'scored', 0, 2],
    ['sum-numbers', 'error', null, 2],
  ]);
  // The chosen trial of hello-world is the one that passed; its rewards are rows of their own.
  const chosen = await rowsOf(
    `SELECT r.key, r.value FROM trials t JOIN rewards r USING (eval_id, task, trial)
     WHERE t.eval_id = '${evalId}' AND t.task = 'hello-world' AND t.chosen = 1 ORDER BY r.key`,
  );
  expect(chosen.rows).toEqual([
    ['pass', 1],
    ['reward', 1],
  ]);
  const errors = await rowsOf(
    `SELECT task, level, type, count(*) FROM errors WHERE eval_id = '${evalId}' GROUP BY task, level, type ORDER BY task, level`,
  );
  expect(errors.rows).toEqual([
    ['count-words', 'trial', 'AgentTimeoutError', 2],
    ['sum-numbers', 'task', null, 1],
    ['sum-numbers', 'trial', 'RewardFileNotFoundError', 2],
  ]);
});

test('evaluations and spend agree with the result', async () => {
  const result = JSON.parse(fs.readFileSync(path.join(f.home, 'results', `${evalId}.json`), 'utf8')) as CandidateResult;
  const ev = await rowsOf(
    `SELECT e.candidate, e.status, e.workflow_status, e.score, e.n_errors, e.source, s.cost_usd
     FROM evaluations e JOIN spend s USING (eval_id) WHERE eval_id = '${evalId}'`,
  );
  expect(ev.rows).toHaveLength(1);
  const [candidate, status, workflowStatus, score, nErrors, source, cost] = ev.rows[0]!;
  expect([candidate, status, workflowStatus, score, nErrors, source]).toEqual([
    result.candidate,
    'completed',
    'COMPLETED',
    result.score,
    1,
    'temporal',
  ]);
  expect(cost as number).toBeCloseTo(0.8, 6);
  // A result file Temporal does not list (its history gone) is still queried, marked as from the file.
  fs.writeFileSync(path.join(f.home, 'results', 'eval-from-file.json'), JSON.stringify({ ...result, evalId: 'eval-from-file' }));
  const fromFile = await rowsOf(
    `SELECT source, workflow_status, (SELECT count(*) FROM tasks t WHERE t.eval_id = e.eval_id) FROM evaluations e WHERE eval_id = 'eval-from-file'`,
  );
  expect(fromFile.rows).toEqual([['file', null, 6]]);
  fs.rmSync(path.join(f.home, 'results', 'eval-from-file.json'));
});

test('read-only by the engine: writes and a second statement are refused (exit 2, SQLite says why)', async () => {
  // A write that returns rows gets as far as SQLite running it, and SQLite refuses it (PRAGMA query_only).
  // Each refusal is its own CLI run (its own database, built from the sources): they run at once.
  const nonQueries = ['PRAGMA query_only = 0', `DELETE FROM tasks WHERE eval_id = '${evalId}'`];
  const [write, smuggled, ...refused] = await Promise.all([
    query(`DELETE FROM tasks WHERE eval_id = '${evalId}' RETURNING task`),
    query('SELECT 1; DROP TABLE tasks'),
    ...nonQueries.map((statement) => query(statement)),
  ]);
  expect(write.code).toBe(2);
  expect(write.stderr).toMatch(/error: query: attempt to write a readonly database/);
  expect(smuggled.code).toBe(2);
  expect(smuggled.stderr).toMatch(/one statement at a time/);
  for (const r of refused) {
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a query: the statement returns no columns/);
  }
  // Nothing changed: the rows are all there.
  expect((await rowsOf(`SELECT count(*) FROM tasks WHERE eval_id = '${evalId}'`)).rows).toEqual([[6]]);
});

test('row and time limits, CSV', async () => {
  const [two, slow, csv] = await Promise.all([
    query('--json', '--max-rows', '2', `SELECT task FROM tasks WHERE eval_id = '${evalId}' ORDER BY task`),
    query('--timeout', '1s', 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c'),
    query(
      '--csv',
      `SELECT task, score, error IS NOT NULL AS failed FROM tasks WHERE eval_id = '${evalId}' AND task IN ('hello-world', 'sum-numbers') ORDER BY task`,
    ),
  ]);
  expect(JSON.parse(two.stdout)).toMatchObject({ rows: [['add-cli-flag'], ['count-words']], rowCount: 2, truncated: true, maxRows: 2 });
  expect(slow.code).toBe(2);
  expect(slow.stderr).toMatch(/stopped after 1 s, the time limit/);
  expect(csv.code).toBe(0);
  expect(csv.stdout).toBe('task,score,failed\r\nhello-world,1,0\r\nsum-numbers,,1\n');
});
