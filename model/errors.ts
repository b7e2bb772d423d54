/**
 * vero's error model. Every error of ours is a `VeroError`: it carries the CLI's exit code and, when an activity
 * throws it, the failure type (and retryability) the workflow sees. SDK errors are recognised with `instanceof`
 * (cli/main.ts); cause chains are printed by `causeChain` everywhere.
 */
import type { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
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
  abstract readonly exitCode: ExitCode;
  /** The ApplicationFailure type an activity reports this as. */
  abstract readonly failureType: string;
  /** Whether another attempt of the activity could succeed. */
  readonly retryable: boolean = false;
  override get name(): string {
    return this.constructor.name;
  }
}

/** Bad user input (config file, flags, candidate ref). Never retried; the CLI exits 2. */
export class ConfigError extends VeroError {
  readonly exitCode = ExitCode.badInput;
  readonly failureType: string = FailureType.ConfigError;
}

/** Something this machine runs failed: a tool missing, a server that did not start, a scorer that crashed. */
export class InfrastructureError extends VeroError {
  readonly exitCode = ExitCode.evaluationFailed;
  readonly failureType = FailureType.InfrastructureError;
  override readonly retryable = true;
}

/** The sidecar's budget ledger (or the gateway's meter) cannot be read: it refuses to guess what was spent. */
export class LedgerCorruptError extends VeroError {
  readonly exitCode = ExitCode.evaluationFailed;
  readonly failureType = FailureType.SidecarError;
}

/** No Temporal server answers at the configured address. */
export class TemporalUnreachableError extends VeroError {
  readonly exitCode = ExitCode.temporalUnreachable;
  readonly failureType = FailureType.TemporalUnreachable;
}

/** A git command failed (a network blip fetching a remote agent repo is worth another attempt). */
export class GitCommandError extends VeroError {
  readonly exitCode = ExitCode.evaluationFailed;
  readonly failureType = FailureType.GitError;
  override readonly retryable = true;
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
  readonly exitCode = ExitCode.evaluationFailed;
  readonly failureType = FailureType.TaskNameMismatch;
}

/** A file vero refuses to read (not a regular file, too large, escapes its directory). */
export class UnreadableFileError extends VeroError {
  readonly exitCode = ExitCode.badInput;
  readonly failureType = FailureType.ConfigError;
}

/**
 * An eval-sidecar error with its HTTP status: thrown by the sidecar (and answered with that status; messages
 * never carry hidden data), and by `vero eval`/`submit`/… for the error status it received (0: no answer).
 */
export class SidecarError extends VeroError {
  readonly exitCode = ExitCode.evaluationFailed;
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
  readonly exitCode = ExitCode.evaluationFailed;
  readonly failureType = FailureType.InvalidInput; // never thrown inside an activity
}

/** `vero demo --optimize`: a compiled example task did not reward the optimized candidate above the baseline. */
export class DemoFailedError extends VeroError {
  readonly exitCode = ExitCode.evaluationFailed;
  readonly failureType = FailureType.InvalidInput; // never thrown inside an activity
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

/** Formats zod issues as `file: path.to.field: problem` lines. */
/**
 * `flags` maps dotted paths set from the command line to the flag that set them (`execution.concurrency` →
 * `--concurrency`): a bad value there is blamed on the flag, not on the file.
 */
/** An issue's message; a number out of a double's range (YAML's `1e309` is Infinity) says a finite number was expected. */
function issueMessage(i: z.core.$ZodIssue): string {
  const received = (i as { received?: unknown }).received;
  if (i.code === 'invalid_type' && i.expected === 'number' && typeof received === 'string' && /Infinity|NaN/.test(received))
    return `expected a finite number, got ${received === 'NaN' ? 'NaN' : 'infinity (a number beyond ±1.8e308)'}`;
  return i.message;
}

export function formatZodIssues(issues: z.core.$ZodIssue[], where: string, schema?: z.ZodType, flags: Record<string, string> = {}): string {
  return issues
    .map((i) => ({ ...i, message: issueMessage(i) }) as z.core.$ZodIssue)
    .flatMap((i) => {
      const at = i.path.length ? i.path.join('.') : '(top level)';
      const flag = Object.entries(flags).find(([p]) => at === p || at.startsWith(`${p}.`))?.[1];
      if (flag) return [`${flag}: ${i.message}${at.includes('.') ? ` (${at})` : ''}`];
      if (i.code === 'unrecognized_keys') {
        // One line per key, with the nearest key the schema knows there when it is a likely typo.
        const known = schema ? knownKeysAt(schema, i.path) : [];
        return (i as { keys: string[] }).keys.map((k) => {
          const guess = closestKey(k, known);
          return `${where}: ${i.path.length ? `${at}.${k}` : k}: unknown key${guess ? ` (did you mean ${guess}?)` : ''}`;
        });
      }
      return [`${where}: ${at}: ${i.message}`];
    })
    .join('\n');
}

/** The keys an object schema accepts at `path` (through defaults, optionals, arrays, records and pipes), or []. */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s: unknown = schema;
  const def = (x: unknown) => (x as { def?: Record<string, unknown> }).def ?? {};
  const unwrap = (x: unknown): unknown => {
    for (let d = def(x); ['default', 'optional', 'nullable', 'prefault', 'catch', 'readonly', 'pipe'].includes(String(d.type)); d = def(x))
      x = d.type === 'pipe' ? d.in : d.innerType;
    return x;
  };
  for (const key of path) {
    const d = def(unwrap(s));
    if (d.type === 'object') s = (d.shape as Record<string, unknown>)[String(key)];
    else if (d.type === 'array') s = d.element;
    else if (d.type === 'record') s = d.valueType;
    else return [];
    if (s === undefined) return [];
  }
  const d = def(unwrap(s));
  return d.type === 'object' ? Object.keys(d.shape as Record<string, unknown>) : [];
}

/** The known key nearest to `key` when it is a likely typo (edit distance at most a third of its length), else null. */
export function closestKey(key: string, known: readonly string[]): string | null {
  let best: { k: string; d: number } | null = null;
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (!best || d < best.d) best = { k, d };
  }
  return best && best.d <= Math.max(1, Math.floor(key.length / 3)) ? best.k : null;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
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
