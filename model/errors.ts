/**
 * vero's error model. Every error of ours is a `VeroError`: it carries the CLI's exit code and, when an activity
 * throws it, the failure type (and retryability) the workflow sees. SDK errors are recognised with `instanceof`
 * (cli/main.ts); cause chains are printed by `causeChain` everywhere.
 */
import type { ApplicationFailure } from '@temporalio/common';
import { FAILURES, FailureType } from './failures';

/** What `vero` exits with. */
export const ExitCode = {
  ok: 0,
  /** The evaluation failed (error rate over the threshold, or the workflow failed), or the sidecar said no. */
  evaluationFailed: 1,
  /** Bad input: config file, flags, candidate, unknown evaluation id. */
  badInput: 2,
  /** The Temporal server cannot be reached. */
  temporalUnreachable: 3,
  /** The evaluation ended `budget_exhausted`: a spend cap kept tasks from running (its results are partial). */
  budgetExhausted: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export abstract class VeroError extends Error {
  /** The ApplicationFailure type an activity reports this as; its exit code and retryability come from FAILURES. */
  abstract readonly failureType: FailureType;
  /** What `vero` exits with: the failure table's rule for this type. */
  get exitCode(): ExitCode {
    return FAILURES[this.failureType].exitCode;
  }
  /** Whether another attempt of the activity could succeed: the failure table's rule for this type. */
  get retryable(): boolean {
    return FAILURES[this.failureType].retryable;
  }
  override get name(): string {
    return this.constructor.name;
  }
}

/** Bad user input (config file, flags, candidate ref). Never retried; the CLI exits 2. */
export class ConfigError extends VeroError {
  readonly failureType: FailureType = FailureType.ConfigError;
}

/** Something this machine runs failed: a tool missing, a server that did not start, a scorer that crashed. */
export class InfrastructureError extends VeroError {
  readonly failureType = FailureType.InfrastructureError;
}

/** The sidecar's budget ledger (or the gateway's meter) cannot be read: it refuses to guess what was spent. */
export class LedgerCorruptError extends VeroError {
  readonly failureType = FailureType.SidecarError;
}

/** No Temporal server answers at the configured address. */
export class TemporalUnreachableError extends VeroError {
  readonly failureType = FailureType.TemporalUnreachable;
}

/** A git command failed (a network blip fetching a remote agent repo is worth another attempt). */
export class GitCommandError extends VeroError {
  readonly failureType = FailureType.GitError;
  constructor(
    readonly args: string[],
    readonly gitExitCode: number | undefined,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (exit ${gitExitCode ?? '?'}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  }
}

/** Trials ran but none is for the requested task (e.g. `org/name` asked, dir name run). */
export class TaskNameMismatchError extends VeroError {
  readonly failureType = FailureType.TaskNameMismatch;
}

/** A file vero refuses to read (not a regular file, too large, escapes its directory). */
export class UnreadableFileError extends VeroError {
  readonly failureType = FailureType.ConfigError;
}

/**
 * An eval-sidecar error with its HTTP status: thrown by the sidecar (and answered with that status; messages
 * never carry hidden data), and by `vero eval`/`submit`/… for the error status it received (0: no answer).
 */
export class SidecarError extends VeroError {
  readonly failureType = FailureType.SidecarError;
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A workflow run by the CLI (a build) failed for a reason other than bad input; the message is its cause chain. */
export class WorkflowRunFailedError extends VeroError {
  readonly failureType = FailureType.CommandFailed;
}

/** The harbor launcher a CLI process runs cannot be executed (an activity reports it as a typed failure). */
export class HarborNotFoundError extends VeroError {
  readonly failureType = FailureType.HarborNotFound;
}

/** `vero demo --optimize`: a compiled example task did not reward the optimized candidate above the baseline. */
export class DemoFailedError extends VeroError {
  readonly failureType = FailureType.CommandFailed;
}

/** The messages of an error and its causes, outermost first: `a: b: c`. */
export function causeChain(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && e !== null; e = (e as { cause?: unknown }).cause) {
    if (e instanceof Error) parts.push(e.message);
    else {
      parts.push(String(e));
      break;
    }
    if (parts.length > 20) break;
  }
  return parts.filter(Boolean).join(': ');
}

/**
 * @temporalio/common when first needed: most CLI commands (`vero trials`, `--help`) never build or inspect a
 * failure, and loading it (≈ 45 modules) is a third of their start-up.
 */
const temporalCommon = () => require('@temporalio/common') as typeof import('@temporalio/common');

/** The ApplicationFailure types along a failure's cause chain, outermost first. */
export function failureTypes(err: unknown): string[] {
  const out: string[] = [];
  const { ApplicationFailure } = temporalCommon();
  for (let e: unknown = err; e instanceof Error && out.length < 20; e = (e as { cause?: unknown }).cause)
    if (e instanceof ApplicationFailure && e.type) out.push(e.type);
  return out;
}

/**
 * How an activity reports an error to its workflow: a VeroError becomes an ApplicationFailure of its failure
 * type (non-retryable unless it says otherwise); anything else is left to Temporal's retry policy.
 */
export function asActivityFailure(e: unknown): unknown {
  if (!(e instanceof VeroError)) return e;
  return temporalCommon().ApplicationFailure.create({ message: e.message, type: e.failureType, nonRetryable: !e.retryable, cause: e });
}

/**
 * The one way activities (and workflows) fail with a type: its retryability comes from the failure table
 * (model/failures.ts), so a type is never retryable at one site and not at another.
 */
export function typedFailure(type: FailureType, message: string, cause?: Error): ApplicationFailure {
  const { ApplicationFailure, ApplicationFailureCategory } = temporalCommon();
  return ApplicationFailure.create({
    message,
    type,
    nonRetryable: !FAILURES[type].retryable,
    ...(FAILURES[type].expected ? { category: ApplicationFailureCategory.BENIGN } : {}),
    ...(cause ? { cause } : {}),
  });
}

/** The CLI's exit code for a failure type (unknown types: the evaluation failed). */
export function exitCodeForFailure(type: string | null | undefined): ExitCode {
  return (type && type in FAILURES ? FAILURES[type as FailureType].exitCode : ExitCode.evaluationFailed) as ExitCode;
}
