/**
 * Failure types of activities (the `type` of ApplicationFailure). Workflow code imports this module, so it
 * holds constants only.
 */
export const FailureType = {
  /** The agent repo is missing or not a git repo. */
  AgentRepoNotFound: 'AgentRepoNotFound',
  /** The candidate ref does not name a commit. */
  CandidateNotFound: 'CandidateNotFound',
  /** A git command failed while materializing a worktree. */
  GitError: 'GitError',
  /** The harbor launcher could not be executed. */
  HarborNotFound: 'HarborNotFound',
  /** harbor rejected its command line (exit 2): a flag vero-harbor built or an extra arg is wrong. */
  HarborUsageError: 'HarborUsageError',
  /** harbor refused the job before running a trial (exit 1, no job dir): bad task name, dataset, config. */
  HarborConfigError: 'HarborConfigError',
  /** Trials ran but none is for the requested task (e.g. `org/name` against a dir name). */
  TaskNameMismatch: 'TaskNameMismatch',
  /** harbor could not start for an infrastructure reason (the Docker engine is down) until the task timeout. Retryable. */
  HarborUnavailable: 'HarborUnavailable',
  /** No trial of the task has rewards (infrastructure death, missing reward file, crash, timeout). Retryable. */
  HarborTaskError: 'HarborTaskError',
  /** The workflow input failed validation. */
  InvalidInput: 'InvalidInput',
  /** A config (vero.yaml, build.yaml, serve.json) is invalid: e.g. the compiler activity's input. */
  ConfigError: 'ConfigError',
  /** Client side only: no Temporal server answers. */
  TemporalUnreachable: 'TemporalUnreachable',
  /** Client side only: a command the CLI ran (a build, a demo) failed for a reason other than bad input. */
  CommandFailed: 'CommandFailed',
  /** Client side only: the eval sidecar refused a request. */
  SidecarError: 'SidecarError',
  /** Something this machine runs failed (a tool missing, a dev server that did not start, a scorer that crashed). */
  InfrastructureError: 'InfrastructureError',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/** What a failure type means: another attempt could succeed; the evaluation's config is wrong; what `vero` exits with. */
export interface FailureRule {
  retryable: boolean;
  /** Retrying cannot help, and every task would hit it: workflows never retry it (their non-retryable list). */
  config: boolean;
  /** 1 the evaluation failed, 2 bad input, 3 no Temporal server (model/errors.ts ExitCode). */
  exitCode: 1 | 2 | 3;
  /**
   * An expected outcome of one attempt, retried by design (a task's trials all failed): the worker logs it as
   * one line of its own, and the SDK only at DEBUG (Temporal's BENIGN category), not as a warning with a stack.
   */
  expected?: true;
}

/** The one failure table: every failure type's retryability, whether it is the config's fault, and its exit code. */
export const FAILURES: Record<FailureType, FailureRule> = {
  AgentRepoNotFound: { retryable: false, config: true, exitCode: 2 },
  CandidateNotFound: { retryable: false, config: true, exitCode: 2 },
  GitError: { retryable: true, config: false, exitCode: 1 },
  HarborNotFound: { retryable: false, config: true, exitCode: 2 },
  HarborUsageError: { retryable: false, config: true, exitCode: 2 },
  HarborConfigError: { retryable: false, config: true, exitCode: 2 },
  TaskNameMismatch: { retryable: false, config: true, exitCode: 1 },
  HarborUnavailable: { retryable: true, config: false, exitCode: 1 },
  HarborTaskError: { retryable: true, config: false, exitCode: 1, expected: true },
  InvalidInput: { retryable: false, config: true, exitCode: 2 },
  ConfigError: { retryable: false, config: true, exitCode: 2 },
  TemporalUnreachable: { retryable: true, config: false, exitCode: 3 },
  CommandFailed: { retryable: false, config: false, exitCode: 1 },
  SidecarError: { retryable: false, config: false, exitCode: 1 },
  InfrastructureError: { retryable: true, config: false, exitCode: 1 },
};

/**
 * Errors that mean the evaluation's configuration is wrong: retrying cannot help, and every task would hit
 * them. Derived from FAILURES, in FailureType's order (the workflows' non-retryable list).
 */
export const CONFIG_FAILURES: FailureType[] = (Object.values(FailureType) as FailureType[]).filter((t) => FAILURES[t].config);
