/**
 * The Harbor job dirs of an evaluation, across its runs: each task is its own Harbor job under
 * `<home>/runs/<evalId>/<runId>/jobs/<task>`; a `vero retry` (or a race of the candidate) adds another run dir, and a
 * task run again has a job in each. The latest job of a task is the one its row counts. Plain file reads (no
 * Temporal): `vero jobs` and `vero trials` given a run dir use it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { homePaths, runPaths } from '../model/paths';
import { harborJobFiles } from '../model/harbor/paths';
import { readJson } from '../infra/json-file';

export interface EvalJob {
  task: string;
  runId: string;
  jobDir: string;
  /** harbor's output for the job, when it is there. */
  harborLog: string | null;
  /** Trial dirs, and those with a result.json. */
  nTrials: number;
  nFinishedTrials: number;
  /** Whether Harbor wrote the job's result.json with a finish time. */
  finished: boolean;
  /** When the job last changed (its result.json, else its dir), ISO. */
  updatedAt: string;
  /** The task's latest job (the one its row counts); false for one a later run replaced. */
  latest: boolean;
}

const dirsIn = (dir: string): string[] => {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
};

const isDir = (p: string): boolean => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;

function finishedJob(jobDir: string): boolean {
  return !!readJson<{ finished_at?: unknown }>(harborJobFiles.result(jobDir))?.finished_at;
}

function jobOf(runDir: string, task: string): Omit<EvalJob, 'latest'> {
  const job = runPaths(runDir).job(task);
  const trials = dirsIn(job.dir);
  const changed = fs.statSync(harborJobFiles.result(job.dir), { throwIfNoEntry: false }) ?? fs.statSync(job.dir);
  return {
    task,
    runId: path.basename(runDir),
    jobDir: job.dir,
    harborLog: fs.existsSync(job.harborLog) ? job.harborLog : null,
    nTrials: trials.length,
    nFinishedTrials: trials.filter((t) => fs.existsSync(harborJobFiles.resultIn(path.join(job.dir, t)))).length,
    finished: finishedJob(job.dir),
    updatedAt: changed.mtime.toISOString(),
  };
}

/** The jobs under an evaluation's runs dir (`<home>/runs/<evalId>`), by task, then oldest first; the latest marked. */
function jobsUnder(evalRunsDir: string): EvalJob[] {
  const jobs = dirsIn(evalRunsDir)
    .map((run) => path.join(evalRunsDir, run))
    .filter((runDir) => isDir(runPaths(runDir).jobsDir))
    .flatMap((runDir) => dirsIn(runPaths(runDir).jobsDir).map((task) => jobOf(runDir, task)));
  jobs.sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : a.updatedAt.localeCompare(b.updatedAt)));
  return jobs.map((j, i) => ({ ...j, latest: jobs[i + 1]?.task !== j.task }));
}

/** The jobs of evaluation `evalId` under `home`, across its runs. */
export function evalJobs(home: string, evalId: string): EvalJob[] {
  return jobsUnder(homePaths(home).evalRunsDir(evalId));
}

/**
 * The job dirs a dir given to `vero trials` stands for, when it is an evaluation's runs dir (`<home>/runs/<id>`:
 * each task's latest job, across runs) or one run's dir (`<home>/runs/<id>/<run>`: its jobs dir); else null (a
 * Harbor jobs dir or job dir, read as it is).
 */
export function jobDirsOfRunDir(dir: string): string[] | null {
  if (isDir(runPaths(dir).jobsDir) && !fs.existsSync(harborJobFiles.config(dir))) return [runPaths(dir).jobsDir];
  const jobs = jobsUnder(dir);
  return jobs.length ? jobs.filter((j) => j.latest).map((j) => j.jobDir) : null;
}
