/**
 * One `harbor run … --dry-run` with the evaluation's own argv before any task runs, so a bad agent kwarg, an
 * agent that does not import, a task filter that matches nothing or a missing Docker engine shows up in
 * seconds, with Harbor's own message, instead of as one error row per task.
 */
import * as path from 'node:path';
import type { PreflightInput } from '../model/activity-payloads';
import { Context, CancelledFailure } from '@temporalio/activity';
import { typedFailure } from '../model/errors';
import { FailureType } from '../model/failures';
import { jobNameFor, preflightArgv } from '../model/harbor-argv';
import { runInGroup } from '../infra/process-group';
import { fileSize, readSince, tail } from '../infra/file-tail';
import { resolvedRegistryFile } from '../infra/task-source';
import { harborJobConfigFile } from '../infra/harbor-job-config';
import { harborCwd, harborEnv } from './harbor-process';
import { classifyStartFailure } from '../model/launch-decision';
import { withHeartbeat } from './heartbeat';
import { isolationFor } from './harbor-isolation';
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
  const jobsDir = runPaths(input.runDir).jobsDir;
  const jobName = jobNameFor(input.task);
  const logFile = runPaths(input.runDir).preflightLog;
  const cwd = harborCwd(input.runDir);
  const source = s.source.registry_path
    ? { ...s.source, registry_path: resolvedRegistryFile(s.source.registry_path, input.runDir) }
    : s.source;
  const jobConfigFile = harborJobConfigFile(s.harbor, input.runDir);
  const argv = preflightArgv({
    harbor: s.harbor,
    source,
    task: input.task,
    jobsDir,
    jobName,
    worktree: input.worktree,
    ...(jobConfigFile ? { jobConfigFile } : {}),
  });
  const iso = isolationFor(s, harborEnv(s, input.worktree, path.join(jobsDir, jobName)), [input.runDir, input.worktree], 'preflight');
  const offset = fileSize(logFile);
  const run = await runInGroup(argv, {
    cwd,
    ...iso, // env, cleanEnv, uid, gid
    logFile,
    signal: Context.current().cancellationSignal,
    deadline: Date.now() + 5 * 60_000,
    harborFork: true, // its first use starts the worker's fork server, warm for the tasks that follow
  });
  if (run.cancelled) throw Context.current().cancellationSignal.reason ?? new CancelledFailure('cancelled');
  const output = readSince(logFile, offset);
  if (run.notFound) {
    throw typedFailure(
      FailureType.HarborNotFound,
      `harbor launcher not found: "${argv[0]}" (harbor.command); is Harbor installed and on PATH?`,
    );
  }
  if (run.exitCode === 0) {
    const verdict = output.split('\n').find((l) => /Dry run (OK|complete)/.test(l));
    return { message: (verdict ?? 'dry run OK').trim() };
  }
  if (run.timedOut) throw typedFailure(FailureType.HarborUnavailable, 'harbor --dry-run did not finish within 5 minutes');
  if (run.exitCode === 2) {
    throw typedFailure(
      FailureType.HarborUsageError,
      `harbor rejected its command line (exit 2) in the preflight dry run: ${tail(logFile, 1500).trim()}`,
    );
  }
  const failure = classifyStartFailure(output);
  if (failure.kind === 'infrastructure') {
    throw typedFailure(FailureType.HarborUnavailable, `harbor preflight: ${failure.reason}`);
  }
  const dryRunLine = output
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('Dry run failed'));
  // Harbor wraps long messages: take the verdict and the lines after it.
  const detail = dryRunLine
    ? output
        .slice(output.indexOf(dryRunLine))
        .replace(/\s*\n\s*/g, ' ')
        .trim()
    : failure.reason;
  throw typedFailure(FailureType.HarborConfigError, `harbor preflight (--dry-run) failed: ${detail.slice(0, 1500)}`);
}
