/**
 * One `harbor run … --dry-run` with the evaluation's own argv before any task runs, so a bad agent kwarg, an
 * agent that does not import, a task filter that matches nothing or a missing Docker engine shows up in
 * seconds, with Harbor's own message, instead of as one error row per task.
 */
import type { PreflightInput } from '../model/evaluation/activity-payloads';
import { Context, CancelledFailure } from '@temporalio/activity';
import { tail } from '../infra/file-tail';
import { taskInvocation } from '../harbor/invocation';
import { isolationFor } from '../harbor/isolation';
import { launchFacts, launchHarbor } from '../harbor/launch';
import { decideLaunch, DRY_RUN_TIMEOUT_MIN } from '../harbor/launch-decision';
import { launchFailure } from '../harbor/launch-failure';
import { withHeartbeat } from './heartbeat';
import { onThisHost } from './run-task';
import { runPaths } from '../model/paths';

export type { PreflightInput };

export interface PreflightResult {
  /** Harbor's verdict line, e.g. `Dry run OK — 1 trial(s); nothing was run.` */
  message: string;
}

export async function preflightHarbor(input: PreflightInput): Promise<PreflightResult> {
  return withHeartbeat(() => preflight(input));
}

async function preflight(input: PreflightInput): Promise<PreflightResult> {
  const s = input.settings;
  await onThisHost(input.runDir, input.worktree, input.candidate);
  const logFile = runPaths(input.runDir).preflightLog;
  const inv = taskInvocation(s, input.runDir, input.worktree, input.task, 'dry-run');
  const { run, output } = await launchHarbor({
    argv: inv.argv,
    cwd: inv.cwd,
    isolation: isolationFor(s, inv.env, [input.runDir, input.worktree], 'preflight'),
    logFile,
    signal: Context.current().cancellationSignal,
    deadline: Date.now() + DRY_RUN_TIMEOUT_MIN * 60_000,
    forked: true, // from the worker's fork server, warmed at the worker's start (worker/harbor-warm-up.ts)
  });
  const decision = decideLaunch(launchFacts(run, output), 'dry-run');
  switch (decision.kind) {
    case 'dry-run-ok':
      return { message: decision.verdict };
    case 'cancelled':
      throw Context.current().cancellationSignal.reason ?? new CancelledFailure('cancelled');
    case 'launcher-not-found':
    case 'usage-error':
    case 'config-error':
    case 'unavailable':
      throw launchFailure(decision, {
        purpose: 'dry-run',
        launcher: inv.argv[0]!,
        exitCode: run.exitCode,
        signal: run.signal,
        logTail: () => tail(logFile, 1500).trim(),
      });
  }
}
