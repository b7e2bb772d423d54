/**
 * The typed failure of a launch decision that ends the launch (harbor/launch-decision.ts): worded once, for a
 * task and for the preflight's dry run alike.
 */
import { typedFailure } from '../model/errors';
import { FailureType } from '../model/failures';
import type { LaunchDecision, LaunchPurpose } from './launch-decision';

export interface FailedLaunch {
  purpose: LaunchPurpose;
  /** The task (a task's launch). */
  task?: string;
  /** The launcher (argv[0]). */
  launcher: string;
  exitCode: number | null;
  signal: string | null;
  /** The end of harbor's log, when the decision carries no reason of its own. */
  logTail: () => string;
}

type Ending = Extract<LaunchDecision, { kind: 'launcher-not-found' | 'usage-error' | 'config-error' | 'unavailable' }>;

export function launchFailure(d: Ending, l: FailedLaunch): Error {
  switch (d.kind) {
    case 'launcher-not-found':
      return typedFailure(
        FailureType.HarborNotFound,
        `harbor launcher not found: "${l.launcher}" (harbor.command); is Harbor installed and on PATH?`,
      );
    case 'usage-error':
      return typedFailure(
        FailureType.HarborUsageError,
        `harbor rejected its command line (exit 2)${l.purpose === 'dry-run' ? ' in the preflight dry run' : ''}: ${l.logTail()}`,
      );
    case 'unavailable':
      return typedFailure(FailureType.HarborUnavailable, d.reason);
    case 'config-error':
      return l.purpose === 'dry-run'
        ? typedFailure(FailureType.HarborConfigError, `harbor preflight (--dry-run) failed: ${d.reason.slice(0, 1500)}`)
        : typedFailure(
            FailureType.HarborConfigError,
            `harbor did not start the job for task "${l.task}" (exit ${l.exitCode ?? l.signal}): ${d.reason || l.logTail()}`,
          );
  }
}
