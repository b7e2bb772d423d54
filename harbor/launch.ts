/**
 * Every launch of harbor (ESLint: only this module imports the process starters): `launchHarbor` starts one in its
 * own process group (the worker's fork server where it can), with its environment and OS user
 * (harbor/isolation.ts), and returns its ending and what it printed; `launchInForeground` starts `vero run`'s on
 * the user's terminal. Every ending is decided by harbor/launch-decision.ts. The preflight's dry run, a task's run
 * (`launchUntilSettled`: collect the job, start a fresh job dir, wait for the host and launch again, or fail with a
 * typed error), a compiled task's run (harbor/compiled-task-run.ts) and `vero run` go through it.
 */
import * as path from 'node:path';
import { forgetGroup } from '../infra/host-groups';
import { type GroupRunOptions, GroupRunResult, runInGroup } from '../infra/process-group';
import { typedFailure } from '../model/errors';
import { FailureType } from '../model/failures';
import { dockerAnswers } from '../infra/docker';
import { appendToLog, fileSize, readSince } from '../infra/file-tail';
import { forkHarbor } from './forkserver';
import { type Isolation, isolationFor } from './isolation';
import { decideLaunch, type LaunchDecision, type LaunchFacts } from './launch-decision';
import { type FailedLaunch, launcherNotFound, launchFailure } from './launch-failure';
import { runInForeground } from '../infra/foreground';
import { freeBytes, jobStarted, recordPrunedUsage, removePidFile, setJobAside, usageOfJob, writePidFile } from './orphans';
import { usesLocalDocker } from '../model/harbor/config';
import type { TaskAttempt } from './task-attempt';
import { settleDeadPredecessor } from './trial-leftovers';

export interface HarborLaunch extends Omit<GroupRunOptions, 'fork' | 'env' | 'cleanEnv' | 'uid' | 'gid'> {
  argv: string[];
  isolation: Isolation;
  /** Fork it from the worker's harbor fork server (harbor/forkserver.ts) when harbor is a console script. */
  forked: boolean;
}

/** One launch of harbor, to its end; with what it printed (to its log file) during this launch. */
export async function launchHarbor(l: HarborLaunch): Promise<{ run: GroupRunResult; output: string }> {
  const { argv, isolation, forked, ...opts } = l;
  const offset = fileSize(l.logFile);
  const run = await runInGroup(argv, { ...opts, ...isolation, ...(forked ? { fork: forkHarbor } : {}) });
  return { run, output: readSince(l.logFile, offset) };
}

/** The facts the decision table reads; `jobDir` (a task's) tells whether harbor got as far as running the job. */
export function launchFacts(
  run: Partial<GroupRunResult> & Pick<GroupRunResult, 'exitCode' | 'signal' | 'notFound'>,
  output: string,
  jobDir?: string,
): LaunchFacts {
  return {
    detached: run.detached === true,
    cancelled: run.cancelled === true,
    notFound: run.notFound,
    timedOut: run.timedOut === true,
    exitCode: run.exitCode,
    signal: run.signal,
    jobStarted: jobDir !== undefined && jobStarted(jobDir),
    output,
  };
}

/**
 * A CLI process's harbor (a compiled task's run, `vero run`) ended as the decision table says: its exit code, or
 * the interruption, or the failure table's HarborNotFound (exit 2, one line).
 */
export function cliRunExitCode(
  run: Parameters<typeof launchFacts>[0],
  purpose: 'compiled-run' | 'vero-run',
  launcher: Pick<FailedLaunch, 'launcher' | 'launcherFrom'>,
  interrupted?: unknown,
): number {
  const decision = decideLaunch(launchFacts(run, ''), purpose);
  if (decision.kind === 'cancelled') throw interrupted;
  if (decision.kind === 'launcher-not-found')
    throw launcherNotFound({ purpose, ...launcher, exitCode: null, signal: null, logTail: () => '' });
  return decision.code;
}

/** `vero run`'s harbor, on this terminal (Ctrl-C reaches it as it reaches any foreground job): its exit code. */
export async function launchInForeground(argv: string[], env?: Record<string, string>): Promise<number> {
  return cliRunExitCode(await runInForeground(argv[0]!, argv.slice(1), env), 'vero-run', { launcher: argv[0]! });
}

/** Free space that counts as "the disk has room again" after harbor failed on a full disk. */
const MIN_FREE_BYTES = 256 * 1024 * 1024;

/** One launch of a task's harbor, to its end (exit, task timeout, cancel, or left running for the next attempt). */
async function launchTaskOnce(t: TaskAttempt, launch: number, deadline: number): Promise<{ run: GroupRunResult; output: string }> {
  const { argv, cwd } = t.invocation;
  const isolation = isolationFor(t.s, t.env, [t.paths.jobsDir, t.input.worktree, cwd], t.task);
  appendToLog(t.logFile, `\n# vero-harbor attempt ${t.attempt}.${launch} at ${new Date().toISOString()}: ${JSON.stringify(argv)}\n`);
  // The attempt's first heartbeat is this timer's first tick: one at launch would cost a server write per task and
  // report nothing (no trial has run yet); a cancel is seen at the first tick.
  const timer = setInterval(t.beat, t.heartbeatEveryMs());
  try {
    return await launchHarbor({
      argv,
      cwd,
      isolation,
      logFile: t.logFile,
      signal: t.ctx.cancellationSignal,
      deadline,
      graceMs: t.graceMs,
      stopSignal: 'SIGTERM',
      stopTarget: 'leader',
      detachOnAbort: t.leaveForNextAttempt,
      forked: true,
      onStart: (pid, forked) => {
        if (forked) appendToLog(t.logFile, `# forked by the worker's harbor fork server (Harbor imported once): pid ${pid}\n`);
        const startedAt = Date.now();
        writePidFile(t.pidFile, pid, startedAt);
        t.record(pid, startedAt);
      },
    });
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
      : async () => usesLocalDocker(t.s.harbor.environment) && (await dockerAnswers(t.env));
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

/**
 * What follows the end of a task's harbor, launched or adopted from an attempt whose worker died: left running for
 * the next attempt (then recorded without an owner and the attempt aborted), else no longer this host's group, its
 * stopped trials' Docker leftovers removed, its pid file removed, and a cancelled attempt aborted.
 */
export async function settleHarborEnding(t: TaskAttempt, run: GroupRunResult, startedAt = Date.now()): Promise<void> {
  if (run.detached) {
    t.ctx.log.warn('harbor left running for the next attempt to adopt', { task: t.task, why: t.abortWhy() });
    if (run.pid !== null) t.record(run.pid, startedAt, 0); // no owner now: the reaper stops it if no attempt adopts it
    throw t.aborted('timed out');
  }
  if (run.pid !== null) forgetGroup(run.pid);
  if (run.cancelled || run.timedOut) await t.cleanUp(run.cancelled ? 'cancelled' : 'task timeout');
  removePidFile(t.pidFile);
  if (run.cancelled) throw t.aborted('cancelled');
}

/** Launches until one launch settles; returns the run to collect. */
export async function launchUntilSettled(t: TaskAttempt, deadline: number): Promise<GroupRunResult> {
  const argv = t.invocation.argv;
  await settleDeadPredecessor(t); // a dead harbor's trials left in Docker, before its job resumes
  for (let launch = 1; ; launch++) {
    const { run, output } = await launchTaskOnce(t, launch, deadline);
    await settleHarborEnding(t, run);
    const decision = decideLaunch(launchFacts(run, output, t.jobDir));
    switch (decision.kind) {
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
      case 'launcher-not-found':
      case 'usage-error':
      case 'config-error':
        throw launchFailure(decision, {
          purpose: 'task',
          task: t.task,
          launcher: argv[0]!,
          exitCode: run.exitCode,
          signal: run.signal,
          logTail: () => t.logTail(),
        });
    }
  }
}
