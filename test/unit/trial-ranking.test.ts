import { compareTrials, extractReward, LoadedTrial, rankTrials, scoreTask } from '../../model/harbor/trial-ranking';
import type { TrialResult } from '../../model/harbor/result';

let n = 0;
function trial(over: Partial<TrialResult> & { rewards?: Record<string, number> | null; exception?: string }): LoadedTrial {
  const { rewards, exception, ...rest } = over;
  n += 1;
  const result = {
    task_name: 'org/t',
    trial_name: `t__${String(n).padStart(7, 'A')}`,
    task_id: { path: 'ds/t' },
    verifier_result: rewards === undefined ? { rewards: { reward: 1 } } : rewards === null ? null : { rewards },
    exception_info: exception ? { exception_type: exception, exception_message: '', exception_traceback: '', occurred_at: null } : null,
    finished_at: '2026-08-22T12:00:00.000000Z',
    ...rest,
  } as TrialResult;
  return { result, file: `/jobs/j/${result.trial_name}/result.json`, digest: `d${n}` };
}

describe('extractReward', () => {
  test('priority: reward_key, then pass, then reward, then the mean of all values', () => {
    expect(extractReward({ pass: 1, reward: 0 })).toBe(1);
    expect(extractReward({ reward: 0.7 })).toBe(0.7);
    expect(extractReward({ a: 0.2, b: 0.4 })).toBeCloseTo(0.3);
    expect(extractReward({ pass: 1, acc: 0.25 }, 'acc')).toBe(0.25);
    expect(extractReward({ reward: 0.5 }, 'missing')).toBe(0.5);
  });
});

describe('ranking', () => {
  test('a passing trial beats a later failing retry (exception, no rewards)', () => {
    const pass = trial({ rewards: { reward: 1 }, finished_at: '2026-08-22T12:00:00Z' });
    const laterFail = trial({ rewards: null, exception: 'RuntimeError', finished_at: '2026-08-22T13:00:00Z' });
    expect(rankTrials([laterFail, pass])[0]).toBe(pass);
    expect(scoreTask([laterFail, pass]).score).toBe(1);
  });

  test('clean beats scored-with-exception, which beats unscored', () => {
    const clean = trial({ rewards: { reward: 0 } });
    const timedOut = trial({ rewards: { reward: 1 }, exception: 'AgentTimeoutError' });
    const dead = trial({ rewards: null, exception: 'RuntimeError' });
    expect(rankTrials([dead, timedOut, clean]).map((t) => t.result.trial_name)).toEqual(
      [clean, timedOut, dead].map((t) => t.result.trial_name),
    );
  });

  test('both clean: the later finished_at wins, compared as times, across timestamp formats', () => {
    const early = trial({ rewards: { reward: 0.1 }, finished_at: '2026-08-22T09:00:00.000000Z' });
    // Naive (pre-0.21 style) and later in time, although it sorts lower as a string.
    const late = trial({ rewards: { reward: 0.9 }, finished_at: '2026-08-22T10:00:00' });
    const offset = trial({ rewards: { reward: 0.5 }, finished_at: '2026-08-22T09:30:00+00:00' });
    expect(rankTrials([early, late, offset])[0]).toBe(late);
  });

  test('ranking is total and independent of input order', () => {
    const ts = [
      trial({ rewards: { reward: 1 } }),
      trial({ rewards: { reward: 1 } }),
      trial({ rewards: { reward: 0 }, finished_at: null }),
      trial({ rewards: null, exception: 'X' }),
      trial({ rewards: { reward: 1 }, exception: 'AgentTimeoutError' }),
    ];
    const expected = rankTrials(ts).map((t) => t.file);
    for (let i = 0; i < 20; i++) {
      const shuffled = [...ts].sort(() => Math.random() - 0.5);
      expect(rankTrials(shuffled).map((t) => t.file)).toEqual(expected);
    }
    for (const a of ts) for (const b of ts) if (a !== b) expect(Math.sign(compareTrials(a, b))).toBe(-Math.sign(compareTrials(b, a)));
  });
});

describe('scoreTask', () => {
  test('no trial with rewards is an error with no score, never 0', () => {
    const s = scoreTask([trial({ rewards: null, exception: 'RewardFileNotFoundError' })]);
    expect(s).toMatchObject({ status: 'error', score: null, nTrials: 1, nScored: 0, exceptions: ['RewardFileNotFoundError'] });
    expect(scoreTask([])).toMatchObject({ status: 'error', score: null, nTrials: 0 });
  });

  test('metrics are all rewards of the chosen trial', () => {
    expect(scoreTask([trial({ rewards: { pass: 1, tests_passed: 7 } })]).metrics).toEqual({ pass: 1, tests_passed: 7 });
  });

  test('mean aggregation averages every scored attempt, including ones with exceptions', () => {
    const s = scoreTask(
      [
        trial({ rewards: { reward: 1 } }),
        trial({ rewards: { reward: 0 }, exception: 'AgentTimeoutError' }),
        trial({ rewards: null, exception: 'RuntimeError' }),
      ],
      { aggregate: 'mean' },
    );
    expect(s.score).toBe(0.5);
    expect(s.metrics).toEqual({ reward_mean: 0.5, n_attempts: 3, n_scored: 2, n_clean: 1 });
  });
});

describe('reward validity (Harbor 0.26 error policy)', () => {
  test('a rate-limited trial with a reward never beats a valid one, and never scores', () => {
    const limited = trial({ rewards: { reward: 1 }, exception: 'ApiRateLimitError', finished_at: '2026-08-22T13:00:00Z' });
    const valid = trial({ rewards: { reward: 0.25 }, exception: 'AgentTimeoutError', finished_at: '2026-08-22T11:00:00Z' });
    expect(rankTrials([limited, valid])[0]).toBe(valid);
    expect(scoreTask([limited, valid])).toMatchObject({
      status: 'scored',
      score: 0.25,
      nScored: 1,
      nInvalidTrials: 1,
      invalidReasons: [expect.stringMatching(/^ApiRateLimitError /)],
      trialRewards: [0.25],
    });
  });

  test('all trials invalid: an error row naming the exception, never a silent 0 or pass', () => {
    const refused = trial({ rewards: { reward: 0 }, exception: 'BudgetExceededError' });
    const s = scoreTask([refused]);
    expect(s).toMatchObject({ status: 'error', score: null, nScored: 0, nInvalidTrials: 1, trialRewards: [] });
    expect(s.error).toMatch(/no trial has a valid reward.*BudgetExceededError/);
    const passedThenLimited = trial({ rewards: { reward: 1 }, exception: 'RateLimitError' });
    expect(scoreTask([passedThenLimited])).toMatchObject({ status: 'error', score: null });
  });

  test("the agent's own failures keep their reward", () => {
    for (const e of ['NonZeroAgentExitCodeError', 'AgentTimeoutError', 'ContextWindowExceededError'])
      expect(scoreTask([trial({ rewards: { reward: 0.5 }, exception: e })])).toMatchObject({
        status: 'scored',
        score: 0.5,
        nInvalidTrials: 0,
      });
  });

  test("0.26's reward_valid decides, also against the table; mean aggregation counts only valid rewards", () => {
    const overridden = trial({ rewards: { reward: 1 }, exception: 'ApiRateLimitError', reward_valid: true });
    expect(scoreTask([overridden])).toMatchObject({ status: 'scored', score: 1 });
    const a = trial({ rewards: { reward: 1 } });
    const b = trial({ rewards: { reward: 0 }, exception: 'ApiInternalServerError' });
    expect(scoreTask([a, b], { aggregate: 'mean' })).toMatchObject({ status: 'scored', score: 1, nScored: 1, nInvalidTrials: 1 });
  });
});
