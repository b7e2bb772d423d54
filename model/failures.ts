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

/**
 * The one failure table: every failure type of activities (the `type` of ApplicationFailure), with its
 * retryability, whether it is the config's fault, and its exit code. Workflow code imports this module, so it
 * holds constants only.
 */
const FAILURE_TABLE = {
  /** The agent repo is missing or not a git repo. */
  AgentRepoNotFound: { retryable: false, config: true, exitCode: 2 },
  /** The candidate ref does not name a commit. */
  CandidateNotFound: { retryable: false, config: true, exitCode: 2 },
  /** A git command failed while materializing a worktree. */
  GitError: { retryable: true, config: false, exitCode: 1 },
  /** The harbor launcher could not be executed. */
  HarborNotFound: { retryable: false, config: true, exitCode: 2 },
  /** harbor rejected its command line (exit 2): a flag vero-harbor built or an extra arg is wrong. */
  HarborUsageError: { retryable: false, config: true, exitCode: 2 },
  /** harbor refused the job before running a trial (exit 1, no job dir): bad task name, dataset, config. */
  HarborConfigError: { retryable: false, config: true, exitCode: 2 },
  /** Trials ran but none is for the requested task (e.g. `org/name` against a dir name). */
  TaskNameMismatch: { retryable: false, config: true, exitCode: 1 },
  /** harbor could not start for an infrastructure reason (the Docker engine is down) until the task timeout. Retryable. */
  HarborUnavailable: { retryable: true, config: false, exitCode: 1 },
  /** No trial of the task has rewards (infrastructure death, missing reward file, crash, timeout). Retryable. */
  HarborTaskError: { retryable: true, config: false, exitCode: 1, expected: true },
  /** The workflow input failed validation. */
  InvalidInput: { retryable: false, config: true, exitCode: 2 },
  /** A config (vero.yaml, build.yaml, serve.json) is invalid: e.g. the compiler activity's input. */
  ConfigError: { retryable: false, config: true, exitCode: 2 },
  /** Client side only: no Temporal server answers. */
  TemporalUnreachable: { retryable: true, config: false, exitCode: 3 },
  /** Client side only: a command the CLI ran (a build, a demo) failed for a reason other than bad input. */
  CommandFailed: { retryable: false, config: false, exitCode: 1 },
  /** Client side only: the eval sidecar refused a request. */
  SidecarError: { retryable: false, config: false, exitCode: 1 },
  /** Something this machine runs failed (a tool missing, a dev server that did not start, a scorer that crashed). */
  InfrastructureError: { retryable: true, config: false, exitCode: 1 },
} satisfies Record<string, FailureRule>;

export type FailureType = keyof typeof FAILURE_TABLE;
/** Each failure type by its name: `FailureType.GitError` is `'GitError'`. */
export const FailureType = Object.fromEntries(Object.keys(FAILURE_TABLE).map((t) => [t, t])) as { readonly [T in FailureType]: T };
export const FAILURES: Record<FailureType, FailureRule> = FAILURE_TABLE;

/**
 * Errors that mean the evaluation's configuration is wrong: retrying cannot help, and every task would hit
 * them. Derived from FAILURES, in FailureType's order (the workflows' non-retryable list).
 */
export const CONFIG_FAILURES: FailureType[] = (Object.values(FailureType) as FailureType[]).filter((t) => FAILURES[t].config);
