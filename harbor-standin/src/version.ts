/**
 * Which Harbor the stand-in imitates: HARBOR_STANDIN_VERSION (a supported version), else the tested pin (0.25.0). 0.26
 * writes `schema_version`, `reward_valid` and `exception_info.policy` into trial results, counts only valid
 * rewards in the job's mean, and its default retry exclusions are every type whose policy says "no retry".
 */
import { HARBOR_VERSION, isSupportedHarborVersion, SupportedHarborVersion } from '../../model/harbor/version';
import { errorPolicyOf, noRetryExceptionTypes } from '../../model/harbor/error-policy';

/** Harbor 0.25's default `RetryConfig.exclude_exceptions`. */
export const RETRY_EXCLUDE_025 = [
  'AgentTimeoutError',
  'VerifierTimeoutError',
  'RewardFileNotFoundError',
  'RewardFileEmptyError',
  'VerifierOutputParseError',
  'ApiUsageLimitError',
  'AgentSafetyRefusalError',
  'AgentAuthenticationError',
  'ModelNotFoundError',
];

function standinVersion(): SupportedHarborVersion {
  const v = process.env.HARBOR_STANDIN_VERSION;
  if (!v) return HARBOR_VERSION;
  if (!isSupportedHarborVersion(v)) {
    process.stderr.write(`harbor stand-in: HARBOR_STANDIN_VERSION=${v} is not one it imitates (0.25.0, 0.26.0)\n`);
    process.exit(2);
  }
  return v;
}

export const STANDIN_VERSION: SupportedHarborVersion = standinVersion();

/** Whether the results carry 0.26's validity fields (and the job mean counts only valid rewards). */
export const WRITES_REWARD_VALIDITY = STANDIN_VERSION !== '0.25.0';

/** Whether config.json files are written whole (0.26: every default), not without their defaults (0.25). */
export const WRITES_FULL_CONFIG = STANDIN_VERSION !== '0.25.0';

/** The default `exclude_exceptions` of the imitated version. */
export function defaultRetryExclude(): string[] {
  return WRITES_REWARD_VALIDITY ? noRetryExceptionTypes().sort() : [...RETRY_EXCLUDE_025];
}

/** 0.26's serialized policy of an exception. */
export function policyJson(exceptionType: string): Record<string, boolean> {
  const p = errorPolicyOf(exceptionType);
  return { should_retry: p.shouldRetry, should_grade: p.shouldGrade, has_valid_reward: p.hasValidReward };
}

/** 0.26's `reward_valid`: rewards, and no exception or one whose policy keeps the reward valid. */
export function rewardValid(hasRewards: boolean, exceptionType: string | null): boolean {
  return hasRewards && (exceptionType === null || errorPolicyOf(exceptionType).hasValidReward);
}
