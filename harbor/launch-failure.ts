/**
 * The typed failure of a launch decision that ends the launch (harbor/launch-decision.ts): worded once, for a
 * task and for the preflight's dry run alike, and for a harbor a CLI process started (`vero run`, a compiled
 * task's run: a VeroError of the same type).
 */
import { HarborNotFoundError, typedFailure } from '../model/errors';
import { FailureType } from '../model/failures';
import type { LaunchDecision, LaunchPurpose } from './launch-decision';

export interface FailedLaunch {
  purpose: LaunchPurpose;
  /** The task (a task's launch). */
  task?: string;
  /** The launcher (argv[0]). */
  launcher: string;
  /** Where the launcher came from, named when it cannot be executed (default: the caller's own setting). */
  launcherFrom?: string;
  exitCode: number | null;
  signal: string | null;
  /** The end of harbor's log, when the decision carries no reason of its own. */
  logTail: () => string;
}

/** Where each caller's launcher comes from unless it says otherwise. */
const LAUNCHER_FROM: Record<LaunchPurpose, string> = {
  task: 'harbor.command',
  'dry-run': 'harbor.command',
  'vero-run': '--harbor',
  'compiled-run': "the compiled task's run's harbor",
};

type Ending = Extract<LaunchDecision, { kind: 'launcher-not-found' | 'usage-error' | 'config-error' | 'unavailable' }>;

/** An activity's failure: the ApplicationFailure the workflow sees. */
export function launchFailure(d: Ending, l: FailedLaunch): Error {
  const { type, message } = launchEnding(d, l);
  return typedFailure(type, message);
}

/** A CLI process's failure when its harbor cannot be executed: its exit code from the failure table. */
export function launcherNotFound(l: FailedLaunch): HarborNotFoundError {
  return new HarborNotFoundError(launchEnding({ kind: 'launcher-not-found' }, l).message);
}

function launchEnding(d: Ending, l: FailedLaunch): { type: FailureType; message: string } {
  switch (d.kind) {
    case 'launcher-not-found':
      return {
        type: FailureType.HarborNotFound,
        message: `harbor launcher not found: "${l.launcher}" (${l.launcherFrom ?? LAUNCHER_FROM[l.purpose]}); is Harbor installed and on PATH?`,
      };
    case 'usage-error':
      return {
        type: FailureType.HarborUsageError,
        message: `harbor rejected its command line (exit 2)${l.purpose === 'dry-run' ? ' in the preflight dry run' : ''}: ${l.logTail()}`,
      };
    case 'unavailable':
      return { type: FailureType.HarborUnavailable, message: d.reason };
    case 'config-error':
      return l.purpose === 'dry-run'
        ? { type: FailureType.HarborConfigError, message: `harbor preflight (--dry-run) failed: ${d.reason.slice(0, 1500)}` }
        : {
            type: FailureType.HarborConfigError,
            message: `harbor did not start the job for task "${l.task}" (exit ${l.exitCode ?? l.signal}): ${d.reason || l.logTail()}`,
          };
  }
}
