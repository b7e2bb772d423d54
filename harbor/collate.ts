/**
 * Reads Harbor job dirs and scores tasks. Plain file I/O, no Temporal: the runTask activity and the offline
 * `vero trials` command share it.
 *
 * Layout: `<jobs>/<job>/<trial>/result.json`. The job-level `<job>/result.json` is not a trial (it has no
 * task_name) and is skipped; unreadable or invalid trial files are counted, never guessed at.
 */
import { harborJobFiles } from '../model/harbor/paths';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MAX_RESULT_BYTES, readRegularText } from '../infra/bounded-read';
import { isTrialResult, scoringFields, trialTaskKey } from '../model/harbor/result';
import { Aggregation, LoadedTrial, scoreTask, TaskScore } from '../model/harbor/trial-ranking';
import { TaskNameMismatchError } from '../model/errors';
import { COLLATED_ROW_FIELDS, inRowOrder, type CollatedRow } from '../model/evaluation/task-result';

export interface InvalidTrialFile {
  file: string;
  reason: string;
}

export interface LoadedJobs {
  trials: LoadedTrial[];
  invalid: InvalidTrialFile[];
}

function isJobDir(dir: string): boolean {
  return fs.existsSync(harborJobFiles.config(dir)) && fs.existsSync(harborJobFiles.lock(dir));
}

function subdirs(dir: string): string[] {
  try {
    return (
      fs
        .readdirSync(dir, { withFileTypes: true })
        // Dot-named dirs included: Harbor lists `.name` task dirs, and their trial dirs start with `.` too.
        .filter((e) => e.isDirectory())
        .map((e) => path.join(dir, e.name))
        .sort()
    );
  } catch {
    return [];
  }
}

/** What a loaded trial keeps of its file: the fields scoring reads (the default), or the whole of it (the views). */
export interface LoadOptions {
  whole?: boolean;
}

/**
 * Parses one trial result file; null with a reason when it is not a trial result. Only a regular file of
 * bounded size is read, and only when it resolves inside `within` (the jobs dir): a symlink out is not scored.
 */
export function readTrialFile(
  file: string,
  within?: string,
  opts: LoadOptions = {},
): { trial: LoadedTrial } | { invalid: string } | { missing: true } {
  let text: string;
  try {
    text = readRegularText(file, { maxBytes: MAX_RESULT_BYTES, within });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { missing: true }; // a running or interrupted trial
    return { invalid: (e as Error).message };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { invalid: 'not valid JSON (truncated or garbage)' };
  }
  if (isTrialResult(json)) return { trial: { result: opts.whole ? json : scoringFields(json), file } };
  // The slow path, for the message (or a case the fast check missed): zod is loaded only here.
  const { TrialResult } = require('../model/harbor/schemas') as typeof import('../model/harbor/schemas');
  const parsed = TrialResult.safeParse(json);
  if (!parsed.success) {
    return { invalid: parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
  }
  return { trial: { result: opts.whole ? parsed.data : scoringFields(parsed.data), file } };
}

/** The trial dirs under a jobs dir (many jobs) or a single job dir, in the order they are read: sorted by job, then by name. */
export function listTrialDirs(dir: string): string[] {
  const jobDirs = isJobDir(dir) ? [dir] : subdirs(dir);
  return jobDirs.flatMap((job) => subdirs(job));
}

/** A job dir that gives no row: none of its trial dirs has a result.json. */
export interface SkippedJobDir {
  jobDir: string;
  reason: string;
}

/**
 * The job dirs (of a jobs dir, or the one job dir) that collation cannot make a row of, each with why: no trial
 * dir at all (harbor stopped before its first trial), or trial dirs none of which has a result.json (harbor
 * crashed, or still runs). An evaluation makes error rows of the same situations; `vero trials` names them.
 */
export function jobDirsWithoutResults(dir: string): SkippedJobDir[] {
  const jobDirs = isJobDir(dir) ? [dir] : subdirs(dir);
  const out: SkippedJobDir[] = [];
  for (const jobDir of jobDirs) {
    const trialDirs = subdirs(jobDir);
    if (trialDirs.some((t) => fs.existsSync(harborJobFiles.resultIn(t)))) continue;
    const what = isJobDir(jobDir) ? 'a Harbor job dir' : 'a dir without config.json and lock.json';
    out.push({
      jobDir,
      reason: trialDirs.length
        ? `${what} whose ${trialDirs.length} trial dir(s) have no result.json: harbor crashed or still runs`
        : `${what} without trial dirs: harbor stopped before its first trial, or never started`,
    });
  }
  return out;
}

/** Reads the result.json of each trial dir (see readTrialFile); a missing one (a running trial) is no row at all. */
export function readTrialDirs(trialDirs: readonly string[], within: string, opts: LoadOptions = {}): LoadedJobs {
  const out: LoadedJobs = { trials: [], invalid: [] };
  for (const trialDir of trialDirs) {
    const file = harborJobFiles.resultIn(trialDir);
    const r = readTrialFile(file, within, opts);
    if ('trial' in r) out.trials.push(r.trial);
    else if ('invalid' in r) out.invalid.push({ file, reason: r.invalid });
  }
  return out;
}

/** Loads every trial under a jobs dir (many jobs) or a single job dir, on this thread (collate-parallel: on several). */
export function loadTrials(dir: string, opts: LoadOptions = {}): LoadedJobs {
  return readTrialDirs(listTrialDirs(dir), dir, opts);
}

/** A task's score with its name; `taskName` is the chosen trial's `task_name` (may be `org/name` where `task` is the dir name). */
export type CollatedTask = TaskScore & Pick<CollatedRow, 'task' | 'taskName'>;

export { TaskNameMismatchError };

/** Items grouped by key, in one linear pass (each group in the items' order). */
export function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * Scores tasks. With `requested`, every requested task gets a row (an error row when it has no trial), and
 * trials exist but none matches any requested name → TaskNameMismatchError, never a table of zeros.
 */
/** The task of a trial dir (`<task>__<7 chars>`), for a trial whose result.json cannot be read. */
export function taskOfTrialDir(trialDir: string): string {
  const name = path.basename(trialDir);
  const i = name.lastIndexOf('__');
  return i > 0 ? name.slice(0, i) : name;
}

export function collate(
  trials: LoadedTrial[],
  opts: { requested?: string[]; rewardKey?: string | null; aggregate?: Aggregation; invalid?: InvalidTrialFile[] } = {},
): CollatedTask[] {
  const byTask = groupBy(trials, (t) => trialTaskKey(t.result));
  // A task whose every trial file is unreadable is an error row naming the file, never a dropped row.
  const unreadable = new Map<string, InvalidTrialFile[]>();
  for (const bad of opts.invalid ?? []) {
    const task = taskOfTrialDir(path.dirname(bad.file));
    unreadable.set(task, [...(unreadable.get(task) ?? []), bad]);
  }
  const names = opts.requested ?? [...byTask.keys(), ...unreadable.keys()];
  if (opts.requested && trials.length > 0 && !opts.requested.some((n) => byTask.has(n) || unreadable.has(n))) {
    const found = [...byTask.keys()].sort().slice(0, 5);
    throw new TaskNameMismatchError(
      `Harbor produced ${trials.length} trial(s) but none matches the requested task name(s) ${JSON.stringify(opts.requested.slice(0, 5))}; ` +
        `trials are for ${JSON.stringify(found)}. Task names are task dir basenames (or org/name for registry packages).`,
    );
  }
  return [...new Set(names)].sort().map((task) => {
    const group = byTask.get(task) ?? [];
    const score = scoreTask(group, opts);
    const chosen = group.find((t) => t.result.trial_name === score.trial);
    const bad = unreadable.get(task);
    if (group.length === 0 && bad?.length)
      return { task, taskName: null, ...score, error: `unreadable result.json: ${bad[0]!.file}: ${bad[0]!.reason}` };
    return { task, taskName: chosen?.result.task_name ?? null, ...score };
  });
}

/** A collated task as `vero trials --json` prints it (its fields in the row's order: model/evaluation/task-result.ts). */
export function collatedRow(c: CollatedTask, jobDir: string): CollatedRow {
  const invalid = c.nInvalidTrials ? {} : { nInvalidTrials: undefined, invalidReasons: undefined };
  return inRowOrder({ ...c, ...invalid, jobDir }, COLLATED_ROW_FIELDS) as CollatedRow;
}
