/**
 * Harbor faults injected through the stand-in's scenarios: each ends as the documented status, scores from
 * partial trials are salvaged, and nothing is silently 0. The cases are evaluations of their own on one worker,
 * run concurrently.
 */
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import type { TaskResult } from '../../model/evaluation/task-result';
import { evalFixture, runsPerTask } from '../helpers/fixtures';
import { address, client, fileWorker } from '../helpers/temporal';

jest.setTimeout(120_000);

const q = fileWorker('fault');

interface Expect {
  status: 'scored' | 'error';
  score?: number | null;
  runs: number;
  error?: RegExp;
  exceptions?: string[];
  timedOut?: boolean;
}

const cases: [string, unknown, Expect][] = [
  ['crash with no result.json, then a clean run', [{ process: 'crash' }, { reward: 1 }], { status: 'scored', score: 1, runs: 2 }],
  [
    'crash on every run',
    { process: 'crash' },
    { status: 'error', score: null, runs: 2, error: /no trial result; harbor exit null|no trial result; harbor exit SIGKILL/ },
  ],
  ['non-zero exit after the trials finished', [{ reward: 1, process: 'exit', exit_code: 3 }], { status: 'scored', score: 1, runs: 1 }],
  ['truncated result.json', { result_json: 'truncated' }, { status: 'error', runs: 2, error: /1 unreadable result\.json/ }],
  [
    'reward file missing',
    { reward_file: 'missing' },
    { status: 'error', runs: 2, error: /RewardFileNotFoundError/, exceptions: ['RewardFileNotFoundError'] },
  ],
  ['reward file empty', { reward_file: 'empty' }, { status: 'error', runs: 2, error: /RewardFileEmptyError/ }],
  ['reward file invalid', { reward_file: 'invalid' }, { status: 'error', runs: 2, error: /VerifierOutputParseError/ }],
  [
    'agent timeout with a reward is scored, and says so',
    { exception: 'AgentTimeoutError', reward: 0.5 },
    { status: 'scored', score: 0.5, runs: 1, exceptions: ['AgentTimeoutError'] },
  ],
  [
    'environment failure then success',
    [{ exception: 'RuntimeError', message: 'Docker compose command failed' }, { reward: 1 }],
    { status: 'scored', score: 1, runs: 2 },
  ],
];

test.concurrent.each(cases)('%s', async (_name, outcome, want) => {
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: { tasks: { 'hello-world': outcome } },
    tasks: { names: ['hello-world'] },
    execution: { task_attempts: 2 },
  });
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  const { handle } = await startOrAttach(await client(), input, q);
  const r = (await handle.result()) as CandidateResult;
  const t = r.tasks![0] as TaskResult;
  expect(t.status).toBe(want.status);
  if (want.score !== undefined) expect(t.score).toBe(want.score);
  expect(t.runs).toBe(want.runs);
  if (want.error) expect(t.error).toMatch(want.error);
  if (want.status === 'scored') expect(t.error).toBeNull();
  if (want.exceptions) expect(t.exceptions).toEqual(want.exceptions);
  // An error is reported as one, and counts as 0 in the mean.
  expect(r.nErrors).toBe(want.status === 'error' ? 1 : 0);
  expect(r.score).toBe(want.status === 'error' ? 0 : t.score);
  expect(runsPerTask(f.invocationLog)['hello-world']).toBe(want.runs);
});
