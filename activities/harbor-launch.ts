/**
 * Launches harbor for a task until a launch settles: each launch runs in its own process group (pid file and
 * host record written at start), and its ending is decided by model/launch-decision.ts — collect the job, start
 * a fresh job dir, wait for the host (Docker, disk) and launch again, or fail with a typed error.
 */
import * as path from 'node:path';
import { forgetGroup } from '../infra/host-groups';
import { GroupRunResult, runInGroup } from '../infra/process-group';
import { typedFailure } from '../model/errors';
import { FailureType } from '../model/failures';
import { decideLaunch, type LaunchDecision } from '../model/launch-decision';
import { isolationFor } from './harbor-isolation';
import { freeBytes, jobStarted, recordPrunedUsage, removePidFile, setJobAside, usageOfJob, writePidFile } from '../infra/harbor-jobs';
import { usesLocalDocker } from './harbor-process';
import { dockerAnswers } from '../infra/docker';
import { appendToLog, fileSize, readSince } from '../infra/file-tail';
import type { TaskAttempt } from './task-attempt';

/** Free space that counts as "the disk has room again" after harbor failed on a full disk. */
const MIN_FREE_BYTES = 256 * 1024 * 1024;

/** One launch of harbor, to its end (exit, task timeout, cancel, or left running for the next attempt). */
async function launchOnce(
  t: TaskAttempt,
  argv: string[],
  launch: number,
  deadline: number,
): Promise<{ run: GroupRunResult; output: string }> {
  const cwd = t.cwd();
  const iso = isolationFor(t.s, t.env, [t.paths.jobsDir, t.input.worktree, cwd], t.task);
  const offset = fileSize(t.logFile);
  appendToLog(t.logFile, `\n# vero-harbor attempt ${t.attempt}.${launch} at ${new Date().toISOString()}: ${JSON.stringify(argv)}\n`);
  // The attempt's first heartbeat is this timer's first tick: one at launch would cost a server write per task and
  // report nothing (no trial has run yet); a cancel is seen at the first tick.
  const timer = setInterval(t.beat, t.heartbeatEveryMs());
  try {
    const run = await runInGroup(argv, {
      cwd,
      ...iso, // env, cleanEnv, uid, gid
      logFile: t.logFile,
      signal: t.ctx.cancellationSignal,
      deadline,
      graceMs: t.graceMs,
      stopSignal: 'SIGTERM',
      stopTarget: 'leader',
      detachOnAbort: t.leaveForNextAttempt,
      harborFork: true,
      onStart: (pid, forked) => {
        if (forked) appendToLog(t.logFile, `# forked by the worker's harbor fork server (Harbor imported once): pid ${pid}\n`);
        const startedAt = Date.now();
        writePidFile(t.pidFile, pid, startedAt);
        t.record(pid, startedAt);
      },
    });
    return { run, output: readSince(t.logFile, offset) };
  } finally {
    clearInterval(timer);
  }
}

/**
 * Waits until the host can run harbor again (Docker answers, or the disk has room), heartbeating, sleeping
 * with the activity's context so a cancel is seen at once; fails (retryable) when the task timeout comes first.
 */
async function waitForHost(t: TaskAttempt, d: Extract<LaunchDecision, { kind: 'wait' }>, deadline: number): Promise<void> {
  const ready =
    d.for === 'disk'
      ? async () => (freeBytes(path.dirname(t.jobDir)) ?? 0) >= MIN_FREE_BYTES
      : async () => usesLocalDocker(t.s) && (await dockerAnswers(t.env));
  const what = d.for === 'disk' ? 'disk space' : 'Docker';
  t.notes.push(`harbor could not start (${d.reason}); waited for ${what} and ran it again`);
  t.ctx.log.warn(`harbor could not start; waiting for ${what}`, { task: t.task, reason: d.reason });
  for (let wait = 2_000; !(await ready()); wait = Math.min(wait * 2, 60_000)) {
    if (Date.now() + wait > deadline)
      throw typedFailure(FailureType.HarborUnavailable, `task "${t.task}": ${d.reason} (still unavailable at the task timeout)`);
    t.beat();
    await t.ctx.sleep(wait); // rejects with the cancellation when the attempt is cancelled
  }
}

/** Launches until one launch settles; returns the run to collect. */
export async function launchUntilSettled(t: TaskAttempt, deadline: number): Promise<GroupRunResult> {
  const argv = t.argv();
  for (let launch = 1; ; launch++) {
    const { run, output } = await launchOnce(t, argv, launch, deadline);
    const decision = decideLaunch({
      detached: run.detached === true,
      cancelled: run.cancelled,
      notFound: run.notFound,
      timedOut: run.timedOut,
      exitCode: run.exitCode,
      jobStarted: jobStarted(t.jobDir),
      output,
    });
    if (decision.kind === 'leave-for-next-attempt') {
      t.ctx.log.warn('harbor left running for the next attempt to adopt', { task: t.task, why: t.abortWhy() });
      if (run.pid !== null) t.record(run.pid, Date.now(), 0); // no owner now: the reaper stops it if no attempt adopts it
      throw t.aborted('timed out');
    }
    if (run.pid !== null) forgetGroup(run.pid);
    removePidFile(t.pidFile);
    if (run.cancelled || run.timedOut) await t.cleanUp(run.cancelled ? 'cancelled' : 'task timeout');
    switch (decision.kind) {
      case 'cancelled':
        throw t.aborted('cancelled');
      case 'launcher-not-found':
        throw typedFailure(
          FailureType.HarborNotFound,
          `harbor launcher not found: "${argv[0]}" (harbor.command); is Harbor installed and on PATH?`,
        );
      case 'usage-error':
        throw typedFailure(FailureType.HarborUsageError, `harbor rejected its command line (exit 2): ${t.logTail()}`);
      case 'collect':
        return run;
      case 'fresh-job': {
        // Harbor will not resume this job (its task files or config changed since the last attempt): start a
        // fresh one, and keep the old dir for inspection.
        const aside = t.paths.staleJob(t.jobName, t.attempt, launch);
        recordPrunedUsage(t.prunedUsageFile, usageOfJob(t.jobDir, path.basename(aside))); // its trials ran: metered
        setJobAside(t.jobDir, aside);
        t.notes.push(`harbor refused to resume the job (${decision.reason}); started a fresh job, the old one is at ${aside}`);
        t.ctx.log.warn('harbor refused to resume; starting a fresh job dir', { task: t.task, reason: decision.reason, aside });
        continue;
      }
      case 'wait':
        // The host's condition, not the evaluation's: no task is failed, and no finished one re-run, for an outage.
        await waitForHost(t, decision, deadline);
        continue;
      case 'config-error':
        throw typedFailure(
          FailureType.HarborConfigError,
          `harbor did not start the job for task "${t.task}" (exit ${run.exitCode ?? run.signal}): ${decision.reason || t.logTail()}`,
        );
    }
  }
}
