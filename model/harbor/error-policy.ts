/**
 * Harbor's error policy (0.26): what an exception that ended a trial means for its reward, keyed by the
 * exception's type name. Harbor 0.26 writes the verdict into result.json (`reward_valid`,
 * `exception_info.policy`); for results of 0.25, which do not, the same table derives it from
 * `exception_info.exception_type`. Pure: collation, resume pruning and the stand-in's tests read it.
 */
import type { TrialResult } from './schemas';

/** One row of the table: retry the trial, grade it, and whether a reward it got counts. */
export interface ErrorPolicy {
  shouldRetry: boolean;
  shouldGrade: boolean;
  hasValidReward: boolean;
}

const policy = (shouldRetry: boolean, shouldGrade: boolean, hasValidReward: boolean): ErrorPolicy => ({
  shouldRetry,
  shouldGrade,
  hasValidReward,
});

/** The groups of Harbor 0.26's table (reference/harbor-026.md), each with the exception type names it holds. */
const POLICY_GROUPS: readonly { policy: ErrorPolicy; why: string; types: readonly string[] }[] = [
  {
    policy: policy(true, false, false),
    why: 'the environment failed',
    types: [
      'EnvironmentStartTimeoutError',
      'SandboxBuildFailedError',
      'AgentSetupTimeoutError',
      'HealthcheckError',
      'SandboxLikelyOutOfMemoryError',
      'MemoryLimitExceededError',
      'SSHAccessError',
      'GKEExecStreamClosedError',
      'GKEPodNotFoundError',
      'RuntimeRequestError',
      'AddTestsDirError',
      'DownloadVerifierDirError',
    ],
  },
  {
    policy: policy(true, true, false),
    why: 'a transient model-provider failure',
    types: [
      'ApiError',
      'ApiRateLimitError',
      'ApiInternalServerError',
      'ApiOverloadedError',
      'ApiConnectionClosedError',
      'ApiResponseStalledError',
      'UnknownApiError',
      'NetworkConnectionError',
      'ApiConnectionError',
      'ApiUsageLimitError',
      'RateLimitError',
      'InternalServerError',
      'ServiceUnavailableError',
      'APIConnectionError',
      'APIError',
      'Timeout',
    ],
  },
  {
    policy: policy(false, true, false),
    why: 'a refused model request, a spent budget or a failed verifier',
    types: [
      'UnsupportedModelParametersError',
      'BadRequestError',
      'UnprocessableEntityError',
      'UnsupportedParamsError',
      'APIResponseValidationError',
      'BudgetExceededError',
      'VerifierTimeoutError',
      'RewardFileNotFoundError',
      'RewardFileEmptyError',
      'VerifierOutputParseError',
    ],
  },
  {
    policy: policy(false, false, false),
    why: 'a configuration, access or cancellation failure',
    types: [
      'AgentAuthenticationError',
      'ModelNotFoundError',
      'ApiProviderResourceNotFoundError',
      'AuthenticationError',
      'PermissionDeniedError',
      'NotFoundError',
      'ServiceOperationsUnsupportedError',
      'VercelScopeError',
      'DspyImportError',
      'MissingExtraError',
      'RegradeError',
      'CancelledError',
    ],
  },
  {
    policy: policy(false, true, true),
    why: "the agent's own failure",
    types: [
      'NonZeroAgentExitCodeError',
      'AgentTimeoutError',
      'ContextWindowExceededError',
      'OutputTokenExceededError',
      'ContextLengthExceededError',
      'OutputLengthExceededError',
      'AgentSafetyRefusalError',
      'ContentPolicyViolationError',
    ],
  },
];

/** A type the table does not name: retried, graded, its reward valid (Harbor's UNKNOWN_ERROR_POLICY). */
const UNKNOWN_ERROR_POLICY: ErrorPolicy = policy(true, true, true);

const BY_TYPE: ReadonlyMap<string, { policy: ErrorPolicy; why: string }> = new Map(
  POLICY_GROUPS.flatMap((g) => g.types.map((t) => [t, { policy: g.policy, why: g.why }] as const)),
);

/** Harbor 0.26's policy for an exception type name. */
export function errorPolicyOf(exceptionType: string): ErrorPolicy {
  return BY_TYPE.get(exceptionType)?.policy ?? UNKNOWN_ERROR_POLICY;
}

/** Every exception type name whose policy says "do not retry": Harbor 0.26's default `exclude_exceptions`. */
export function noRetryExceptionTypes(): string[] {
  return [...BY_TYPE].filter(([, v]) => !v.policy.shouldRetry).map(([t]) => t);
}

/** Whether a trial's reward counts, and where that was decided. */
export interface RewardValidity {
  valid: boolean;
  /** `reward_valid` of the file (Harbor ≥ 0.26), its `exception_info.policy`, or the table by exception type. */
  from: 'reward_valid' | 'policy' | 'table' | 'no_exception';
  /** Why not valid: `Type (what the table says it is)`; null when valid. */
  why: string | null;
}

/**
 * Whether a trial's reward counts as the candidate's score. Harbor's own verdict where the file has one
 * (`reward_valid`, then `exception_info.policy.has_valid_reward`); otherwise (0.25 results) the table, by the
 * exception's type. A trial without an exception is valid unless its file says otherwise.
 */
export function rewardValidity(t: TrialResult): RewardValidity {
  const ex = t.exception_info;
  const type = ex?.exception_type ?? null;
  const reason = (valid: boolean) =>
    valid
      ? null
      : type
        ? `${type} (${BY_TYPE.get(type)?.why ?? 'Harbor marked its reward not valid'})`
        : 'Harbor marked the reward not valid';
  if (typeof t.reward_valid === 'boolean') return { valid: t.reward_valid, from: 'reward_valid', why: reason(t.reward_valid) };
  const filed = ex?.policy?.has_valid_reward;
  if (typeof filed === 'boolean') return { valid: filed, from: 'policy', why: reason(filed) };
  if (!type) return { valid: true, from: 'no_exception', why: null };
  const valid = errorPolicyOf(type).hasValidReward;
  return { valid, from: 'table', why: reason(valid) };
}
