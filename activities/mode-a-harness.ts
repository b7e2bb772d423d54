/**
 * A Mode A evaluation by a command harness (vero's command backend): the trusted harness runs in the sidecar,
 * with vero's minimal environment, as the harness user, on the candidate's worktree; it writes a report whose
 * metrics score every requested case. A harness that exits non-zero, or writes no report or one that is not a
 * report, is an infrastructure failure (the activity fails: never a score); a report whose status is not
 * `success`, or that lacks the objective's metric, is the candidate's failure (its cases count as the failure
 * value), as is a harness stopped at the evaluation's timeout (the candidate's code did not finish).
 */
import * as path from 'node:path';
import { CancelledFailure, Context } from '@temporalio/activity';
import type { HarnessRun, ModeAInput } from '../model/evaluation/activity-payloads';
import type { SampleScore } from '../model/compiled-task/sample-score';
import { expandCommand, harnessEnvironment, HarnessReport, harnessRequest } from '../model/compiled-task/command-harness';
import { harnessPaths, homePaths } from '../model/paths';
import { CANDIDATE_FAILED } from '../model/compiled-task/sample-score';
import { InfrastructureError } from '../model/errors';
import { ensureWorktree } from '../infra/git';
import { runInGroup } from '../infra/process-group';
import { chownTree, lookupUser } from '../infra/os-user';
import { writeFileDurable, writeJsonDurable } from '../infra/atomic-file';
import { freshHarnessDir, readReportText } from '../infra/mode-a-files';

/** The harness's OS user (when this process is root and the user exists), given the evaluation's dir. */
function harnessUser(h: HarnessRun, dir: string): { uid?: number; gid?: number } {
  const user = h.runAs && process.getuid?.() === 0 ? lookupUser(h.runAs) : null;
  if (!user) return {};
  chownTree(dir, user.uid, user.gid);
  return { uid: user.uid, gid: user.gid };
}

/** The report at `file` (in `dir`), or the infrastructure failure naming what is wrong with it (never its content). */
function readReport(file: string, dir: string, log: string): HarnessReport {
  let text: string | null;
  try {
    text = readReportText(file, dir);
  } catch (e) {
    throw new InfrastructureError(`the harness's report cannot be read (${(e as Error).message}); its log: ${log}`);
  }
  if (text === null) throw new InfrastructureError(`the harness wrote no report (${file}); its log: ${log}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new InfrastructureError(`the harness wrote a report that is not JSON (${file}); its log: ${log}`);
  }
  const parsed = HarnessReport.safeParse(json);
  if (!parsed.success)
    throw new InfrastructureError(
      `the harness wrote an invalid report (${parsed.error.issues[0]?.path.join('.') || 'its shape'}: ${parsed.error.issues[0]?.message}); its log: ${log}`,
    );
  return parsed.data;
}

/** Why a report is not a score of the candidate (its status, its first diagnostic; or the metric it lacks), or null. */
function candidateFailure(report: HarnessReport, metric: string): string | null {
  if (report.status !== 'success') {
    const d = report.diagnostics[0];
    return `${CANDIDATE_FAILED}: the harness reported ${report.status}${d ? ` (${d.code}: ${d.message})` : ''}`;
  }
  if (report.metrics[metric] === undefined) return `${CANDIDATE_FAILED}: the harness's report has no metric "${metric}"`;
  return null;
}

export async function evaluateWithHarness(input: ModeAInput, h: HarnessRun): Promise<{ resultFile: string }> {
  const dir = homePaths(input.home).modeADir(input.id);
  const files = harnessPaths(dir);
  freshHarnessDir(dir, files.artifacts);
  const chosen = input.ids.map((i) => ({ id: i, name: h.cases[i] ?? String(i) }));
  writeFileDurable(
    files.request,
    JSON.stringify(harnessRequest({ candidate: input.commit, split: input.split, cases: chosen.map((c) => c.name) })),
  );
  const worktree = homePaths(input.home).worktree(input.commit);
  await ensureWorktree(input.repo, input.commit, worktree);
  const signal = Context.current().cancellationSignal;
  const run = await runInGroup(
    expandCommand(h.spec.command, {
      harness: h.spec.dir,
      workspace: worktree,
      request: files.request,
      report: files.report,
      artifacts: files.artifacts,
    }),
    {
      cwd: path.resolve(h.spec.dir, h.spec.working_directory),
      env: harnessEnvironment(h.spec, process.env),
      cleanEnv: true,
      ...harnessUser(h, dir),
      logFile: files.log,
      deadline: Date.now() + input.timeoutSec * 1000,
      signal,
    },
  );
  if (run.cancelled) throw signal.reason ?? new CancelledFailure('cancelled');
  let failure: string | null;
  let metrics: Record<string, number> = {};
  if (run.timedOut) failure = `${CANDIDATE_FAILED}: the harness did not finish within ${input.timeoutSec} s`;
  else if (run.exitCode !== 0)
    throw new InfrastructureError(`the harness failed (exit ${run.exitCode ?? run.signal}); its log: ${files.log}`);
  else {
    const report = readReport(files.report, dir, files.log);
    failure = candidateFailure(report, h.metric);
    metrics = report.metrics;
  }
  const result: SampleScore[] = chosen.map((c) => ({
    ...c,
    score: failure ? null : metrics[h.metric]!,
    error: failure,
    metrics,
  }));
  writeJsonDurable(files.result, result, { compact: true });
  return { resultFile: files.result };
}
