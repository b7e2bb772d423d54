/**
 * What one harbor launch's ending means (pure): the one decision table of every launch (harbor/launch.ts starts
 * them all), with a column per caller: a task's attempt (runTask), the preflight's `--dry-run`, a compiled task's
 * run (harbor/compiled-task-run.ts: `vero demo --optimize`, the real-Harbor tier) and `vero run`. Every row has a
 * unit test (test/unit/launch-decision.test.ts); harbor/launch.ts carries the decision out, and
 * harbor/launch-failure.ts words its failures.
 *
 * | facts of the launch                                     | a task                 | the dry run        | a compiled task's run, `vero run` |
 * | ------------------------------------------------------- | ---------------------- | ------------------ | --------------------------------- |
 * | left running (worker shutdown, server timeout/lost)     | leave-for-next-attempt | (never)            | (never)                           |
 * | cancelled (a CLI run: interrupted)                      | cancelled              | cancelled          | cancelled                         |
 * | the launcher does not exist                             | launcher-not-found     | launcher-not-found | launcher-not-found                |
 * | stopped at the deadline                                 | collect                | unavailable        | exit: harbor's code               |
 * | exit 2 (Click's usage error)                            | usage-error            | usage-error        | exit: harbor's code               |
 * | exit 0                                                  | collect                | dry-run-ok         | exit: harbor's code               |
 * | the job started and was not a refused resume            | collect                | (as below)         | exit: harbor's code               |
 * | refused to resume the job dir (changed task or config)  | fresh-job              | config-error       | exit: harbor's code               |
 * | Docker engine down                                      | wait (docker)          | unavailable        | exit: harbor's code               |
 * | Harbor refused the options (0.26: an unknown --ek key)  | config-error           | config-error       | exit: harbor's code               |
 * | disk full                                               | wait (disk)            | config-error       | exit: harbor's code               |
 * | anything else before the job started                    | config-error           | config-error       | exit: harbor's code               |
 *
 * A CLI run's exit code is harbor's (128 when a signal ended it), as the process's own.
 */

/** A task's run, the preflight's `harbor run … --dry-run`, a compiled task's run, or `vero run`'s. */
export type LaunchPurpose = 'task' | 'dry-run' | 'compiled-run' | 'vero-run';

/** How long the preflight's dry run may take. */
export const DRY_RUN_TIMEOUT_MIN = 5;

export interface LaunchFacts {
  /** Left running for the next attempt to adopt. */
  detached: boolean;
  cancelled: boolean;
  /** The launcher (harbor.command) does not exist. */
  notFound: boolean;
  /** Stopped at its deadline (a task's timeout, the dry run's limit). */
  timedOut: boolean;
  exitCode: number | null;
  /** The signal that ended it, if one did. */
  signal: string | null;
  /** Harbor wrote the job's config.json: it got as far as running the job. */
  jobStarted: boolean;
  /** What harbor printed during this launch. */
  output: string;
}

export type StartFailure = { kind: 'infrastructure' | 'disk-full' | 'config' | 'stale-job'; reason: string };

export type LaunchDecision =
  | { kind: 'leave-for-next-attempt' }
  | { kind: 'cancelled' }
  | { kind: 'launcher-not-found' }
  | { kind: 'collect'; why: 'task timeout' | 'exit 0' | 'job ran' }
  | { kind: 'usage-error' }
  | { kind: 'fresh-job'; reason: string }
  | { kind: 'wait'; for: 'docker' | 'disk'; reason: string }
  | { kind: 'config-error'; reason: string }
  | { kind: 'dry-run-ok'; verdict: string }
  | { kind: 'unavailable'; reason: string }
  | { kind: 'exit'; code: number };

const INFRA_MARKERS = [
  /Docker daemon is not running/i,
  /Cannot connect to the Docker daemon/i,
  /error during connect/i,
  /docker\.sock.*(connection refused|no such file)/i,
];

/** The disk is full (Python's OSError errno 28, Node's ENOSPC): the host's condition, not the config's. */
const DISK_FULL = /No space left on device|ENOSPC|\[Errno 28\]/i;
/** Harbor refusing to resume a job dir whose lock or config no longer matches. */
const REFUSED_RESUME = /lock\.json that does not match|cannot be resumed with a different config/;

/** Harbor 0.26 refusing the job's typed options (an unknown `--ek` or `--ak` key, a bad value): its first line. */
const OPTIONS_REFUSAL = /^Invalid kwargs for (environment|agent) '[^']*':$/;

/**
 * Harbor's own refusal of the job's options, its lines joined (`Invalid kwargs for environment 'docker': Unknown
 * option 'x'. See harbor environment schema docker for available options.`), or null.
 */
function optionsRefusal(lines: string[]): string | null {
  const first = lines.findIndex((l) => OPTIONS_REFUSAL.test(l));
  if (first < 0) return null;
  const last = lines.findIndex((l, i) => i > first && /^See harbor (environment|agent) schema /.test(l));
  return lines
    .slice(first, last < 0 ? first + 2 : last + 1)
    .filter(Boolean)
    .join(' ');
}

/**
 * Why harbor stopped before running the job, from what it printed this time: a Docker engine that is down, a
 * full disk, a job dir it will not resume (changed task files or config), or a configuration error.
 */
export function classifyStartFailure(output: string): StartFailure {
  const lines = output.split('\n').map((l) => l.trim());
  const pick = (re: RegExp) => lines.find((l) => re.test(l)) ?? '';
  if (INFRA_MARKERS.some((re) => re.test(output))) return { kind: 'infrastructure', reason: pick(/docker/i) || 'Docker is unavailable' };
  if (DISK_FULL.test(output)) return { kind: 'disk-full', reason: pick(DISK_FULL) || 'no space left on device' };
  const stale = pick(REFUSED_RESUME);
  if (stale) return { kind: 'stale-job', reason: stale.replace(/^FileExistsError:\s*/, '') };
  const refused = optionsRefusal(lines);
  if (refused) return { kind: 'config', reason: refused };
  const last =
    [...lines].reverse().find((l) => /Error|error|failed|No tasks|not found|Invalid/.test(l)) ?? lines.filter(Boolean).at(-1) ?? '';
  return { kind: 'config', reason: last };
}

/** What a task's launch can come to. */
export type TaskLaunchDecision = Exclude<LaunchDecision, { kind: 'dry-run-ok' | 'unavailable' | 'exit' }>;
/** What the dry run can come to. */
export type DryRunDecision = Extract<
  LaunchDecision,
  { kind: 'cancelled' | 'launcher-not-found' | 'usage-error' | 'config-error' | 'dry-run-ok' | 'unavailable' }
>;

/** What a CLI process's harbor can come to: its exit code is the process's. */
export type CliRunDecision = Extract<LaunchDecision, { kind: 'cancelled' | 'launcher-not-found' | 'exit' }>;

export function decideLaunch(f: LaunchFacts, purpose: 'dry-run'): DryRunDecision;
export function decideLaunch(f: LaunchFacts, purpose: 'compiled-run' | 'vero-run'): CliRunDecision;
export function decideLaunch(f: LaunchFacts, purpose?: 'task'): TaskLaunchDecision;
export function decideLaunch(f: LaunchFacts, purpose: LaunchPurpose): LaunchDecision;
export function decideLaunch(f: LaunchFacts, purpose: LaunchPurpose = 'task'): LaunchDecision {
  if (purpose === 'dry-run') return decideDryRun(f);
  if (purpose !== 'task') return decideCliRun(f);
  if (f.detached) return { kind: 'leave-for-next-attempt' };
  if (f.cancelled) return { kind: 'cancelled' };
  if (f.notFound) return { kind: 'launcher-not-found' };
  if (f.timedOut) return { kind: 'collect', why: 'task timeout' };
  if (f.exitCode === 2) return { kind: 'usage-error' };
  if (f.exitCode === 0) return { kind: 'collect', why: 'exit 0' };
  if (f.jobStarted && !REFUSED_RESUME.test(f.output)) return { kind: 'collect', why: 'job ran' };
  const failure = classifyStartFailure(f.output);
  if (failure.kind === 'stale-job') return { kind: 'fresh-job', reason: failure.reason };
  if (failure.kind === 'infrastructure') return { kind: 'wait', for: 'docker', reason: failure.reason };
  if (failure.kind === 'disk-full') return { kind: 'wait', for: 'disk', reason: failure.reason };
  return { kind: 'config-error', reason: failure.reason };
}

/** The dry run creates no job: it answers OK, or why the evaluation's argv would not run. */
function decideDryRun(f: LaunchFacts): DryRunDecision {
  if (f.cancelled || f.detached) return { kind: 'cancelled' }; // (never left running: it has no next attempt)
  if (f.notFound) return { kind: 'launcher-not-found' };
  if (f.exitCode === 0) {
    const verdict = f.output.split('\n').find((l) => /Dry run (OK|complete)/.test(l));
    return { kind: 'dry-run-ok', verdict: (verdict ?? 'dry run OK').trim() };
  }
  if (f.timedOut) return { kind: 'unavailable', reason: `harbor --dry-run did not finish within ${DRY_RUN_TIMEOUT_MIN} minutes` };
  if (f.exitCode === 2) return { kind: 'usage-error' };
  const failure = classifyStartFailure(f.output);
  if (failure.kind === 'infrastructure') return { kind: 'unavailable', reason: `harbor preflight: ${failure.reason}` };
  return { kind: 'config-error', reason: dryRunVerdict(f.output) ?? failure.reason };
}

/** A CLI process's harbor (in its own group or in the foreground): harbor's exit code is the process's. */
function decideCliRun(f: LaunchFacts): CliRunDecision {
  if (f.cancelled || f.detached) return { kind: 'cancelled' };
  if (f.notFound) return { kind: 'launcher-not-found' };
  return { kind: 'exit', code: f.exitCode ?? (f.signal ? 128 : 1) };
}

/** Harbor's `Dry run failed …` verdict and the lines after it (Harbor wraps long messages), as one line. */
function dryRunVerdict(output: string): string | null {
  const line = output
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('Dry run failed'));
  return line
    ? output
        .slice(output.indexOf(line))
        .replace(/\s*\n\s*/g, ' ')
        .trim()
    : null;
}
