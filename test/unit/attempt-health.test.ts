/** Attempt health: starved, dead and unmeasured attempt rates, and the deflation warning. */
import { attemptHealth } from '../../model/evaluation/attempt-health';
import { resultSummary } from '../../cli/format';
import type { CandidateResult } from '../../model/evaluation/candidate-result';

test('starved (0 in, 0 out), dead and unmeasured rates; a warning with the deflation factor at 10% or more', () => {
  const h = attemptHealth([
    { trials: 2, dead: 0, inputTokens: 0, outputTokens: 0 }, // both starved: refused model calls, an honest-looking 0
    { trials: 2, dead: 1, inputTokens: 500, outputTokens: 20 }, // one dead
    { trials: 4, dead: 0, inputTokens: null, outputTokens: null }, // tokens not reported: never read as starved
  ]);
  expect(h).toMatchObject({
    n_attempts: 8,
    n_starved: 2,
    n_dead: 1,
    starved_attempt_rate: 0.25,
    dead_infra_attempt_rate: 0.125,
    unmeasured_attempt_rate: 0.375,
    deflation_factor: 1.6,
  });
  expect(h.warning).toContain('3 of 8 attempt(s) measured nothing (2 starved');
  expect(h.warning).toContain('deflated by about ×1.6');
  expect(attemptHealth([{ trials: 10, dead: 0, inputTokens: 5, outputTokens: 5 }]).warning).toBeUndefined();
  expect(attemptHealth([{ trials: 3, dead: 3, inputTokens: 0, outputTokens: 0 }])).toMatchObject({ n_starved: 0, deflation_factor: null });
});

test('vero results shows attempt health when an attempt measured nothing', () => {
  const row = (task: string, usage: { inputTokens: number | null; outputTokens: number | null }) => ({
    task,
    status: 'scored' as const,
    score: 0,
    metrics: {},
    trial: 't',
    taskName: task,
    nTrials: 1,
    runs: 1,
    exceptions: [],
    timedOut: false,
    jobDir: '/x',
    error: null,
    trialRewards: [0],
    usage: { costUsd: null, cacheTokens: null, ...usage },
  });
  const r = {
    candidate: 'abc',
    candidateRef: 'abc',
    status: 'completed',
    score: 0,
    nTasks: 2,
    nScored: 2,
    nErrors: 0,
    resultFile: '/r.json',
    tasks: [row('a', { inputTokens: 0, outputTokens: 0 }), row('b', { inputTokens: 9, outputTokens: 9 })],
  } as unknown as CandidateResult;
  const text = resultSummary(r);
  expect(text).toContain('attempts  unmeasured 0.500 (starved 0.500, dead 0.000) of 2');
  expect(text).toContain('warning   1 of 2 attempt(s) measured nothing');
});
