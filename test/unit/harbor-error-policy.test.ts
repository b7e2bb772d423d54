import { errorPolicyOf, noRetryExceptionTypes, rewardValidity } from '../../model/harbor/error-policy';
import { harborVersionsDiffer, unsupportedHarborWarning } from '../../model/harbor/version';
import type { TrialResult } from '../../model/harbor/result';

const base = { task_name: 't', trial_name: 't__AAAAAAA', verifier_result: { rewards: { reward: 0 } } };
const withException = (type: string, extra: Record<string, unknown> = {}): TrialResult =>
  ({ ...base, exception_info: { exception_type: type, exception_message: 'm', ...extra } }) as TrialResult;

describe("Harbor 0.26's error policy, by exception type name", () => {
  test.each([
    // [type, should_retry, should_grade, has_valid_reward]
    ['EnvironmentStartTimeoutError', true, false, false],
    ['DownloadVerifierDirError', true, false, false],
    ['ApiRateLimitError', true, true, false],
    ['RateLimitError', true, true, false],
    ['ApiInternalServerError', true, true, false],
    ['Timeout', true, true, false],
    ['BudgetExceededError', false, true, false],
    ['VerifierTimeoutError', false, true, false],
    ['RewardFileNotFoundError', false, true, false],
    ['BadRequestError', false, true, false],
    ['AuthenticationError', false, false, false],
    ['CancelledError', false, false, false],
    ['NonZeroAgentExitCodeError', false, true, true],
    ['AgentTimeoutError', false, true, true],
    ['ContextWindowExceededError', false, true, true],
    ['ContentPolicyViolationError', false, true, true],
    // Not in the table: Harbor's unknown-error policy.
    ['RuntimeError', true, true, true],
    ['apiratelimiterror', true, true, true],
  ])('%s: retry %s, grade %s, valid reward %s', (type, shouldRetry, shouldGrade, hasValidReward) => {
    expect(errorPolicyOf(type)).toEqual({ shouldRetry, shouldGrade, hasValidReward });
  });

  test("the no-retry set is Harbor 0.26's default exclusions: the agent's own failures and every non-transient one", () => {
    const set = new Set(noRetryExceptionTypes());
    for (const t of ['NonZeroAgentExitCodeError', 'CancelledError', 'BadRequestError', 'AuthenticationError', 'BudgetExceededError'])
      expect(set.has(t)).toBe(true);
    for (const t of ['ApiRateLimitError', 'EnvironmentStartTimeoutError', 'RuntimeError']) expect(set.has(t)).toBe(false);
  });
});

describe('rewardValidity: the file first, then the table', () => {
  test.each<[string, TrialResult, boolean, string]>([
    ['a 0.25 result without exception', base as TrialResult, true, 'no_exception'],
    ['a 0.25 result, rate limited after the work was done', withException('ApiRateLimitError'), false, 'table'],
    ['a 0.25 result, budget refused', withException('BudgetExceededError'), false, 'table'],
    ["a 0.25 result, the agent's own timeout", withException('AgentTimeoutError'), true, 'table'],
    ["a 0.25 result, the agent's non-zero exit", withException('NonZeroAgentExitCodeError'), true, 'table'],
    ['a 0.25 result, an exception the table does not know', withException('RuntimeError'), true, 'table'],
    [
      "0.26's policy overrides the table (override_error_policy)",
      withException('ApiRateLimitError', { policy: { should_retry: true, should_grade: true, has_valid_reward: true } }),
      true,
      'policy',
    ],
    [
      "0.26's reward_valid is Harbor's last word",
      { ...withException('AgentTimeoutError'), reward_valid: false } as TrialResult,
      false,
      'reward_valid',
    ],
    ['0.26, clean and valid', { ...base, schema_version: 1, reward_valid: true } as TrialResult, true, 'reward_valid'],
  ])('%s', (_what, trial, valid, from) => {
    const v = rewardValidity(trial);
    expect({ valid: v.valid, from: v.from }).toEqual({ valid, from });
    expect(v.why === null).toBe(valid);
  });

  test('the reason names the exception type and what it is', () => {
    expect(rewardValidity(withException('BudgetExceededError')).why).toMatch(/^BudgetExceededError \(.*budget/);
    expect(rewardValidity(withException('ApiRateLimitError')).why).toMatch(/^ApiRateLimitError \(.*model-provider/);
  });
});

test('a comparison says when A and B ran on different Harbor versions; unsupported versions get a warning', () => {
  expect(harborVersionsDiffer(['0.25.0'], ['0.26.0'])).toMatch(/different Harbor versions \(A 0\.25\.0, B 0\.26\.0\)/);
  expect(harborVersionsDiffer(['0.26.0'], ['0.26.0'])).toBeNull();
  expect(harborVersionsDiffer(undefined, ['0.26.0'])).toBeNull(); // unknown (results recorded before versions were)
  expect(unsupportedHarborWarning('0.26.0')).toBeNull();
  expect(unsupportedHarborWarning('0.27.0')).toMatch(/Harbor 0\.27\.0 is not a version vero-harbor supports \(0\.25\.0, 0\.26\.0\)/);
});
