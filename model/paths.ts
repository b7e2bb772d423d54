/**
 * Where vero-harbor keeps things: the one place the on-disk layout is spelled. Pure string joins (workflow code
 * uses it too); homes and run dirs are absolute POSIX paths.
 *
 * ```
 * <home>/
 *   repos/<digest>.git               this host's bare copy of an agent repo (a path or a git URL)
 *   worktrees/<commit>/              a candidate's checkout (this host's)
 *   results/<evalId>.json            an evaluation's final result (CandidateResult + rows)
 *   results/<evalId>/samples/<i>.json  Mode B rows as sidecar samples
 *   mode-a/<id>/                     a Mode A evaluation: inputs, outputs, scores, logs, result.json
 *   runs/<evalId>/<runId>/           one run of an evaluation workflow (RunPaths)
 *     preflight.harbor.log           `harbor run --dry-run` output
 *     harbor-cwd/                    harbor's working directory (nothing of the candidate's in it)
 *     chunks/<00000>.json            a chunk's rows, for finalize
 *     stale-jobs/<job>-<a>-<l>/      job dirs Harbor refused to resume (set aside, never deleted)
 *     jobs/                          harbor's jobs dir (`-o`)
 *       <job>/                       one task's Harbor job: config.json, lock.json, result.json, <trial>/
 *       <job>.harbor.log             harbor's output; `# vero-harbor attempt <a>.<l>` before each start
 *       <job>.pid                    the running harbor (pid, host, start), for adoption after a worker crash
 *       <job>.harbor-failures        Harbor failures counted by earlier attempts on this host
 * ```
 */

const join = (...parts: string[]): string => parts.join('/').replace(/\/{2,}/g, '/');

/** Files are named by index in a sortable way. */
const index5 = (i: number): string => String(i).padStart(5, '0');

export function homePaths(home: string) {
  return {
    mirror: (repoDigest: string) => join(home, 'repos', `${repoDigest}.git`),
    worktree: (commit: string) => join(home, 'worktrees', commit),
    resultFile: (evalId: string) => join(home, 'results', `${evalId}.json`),
    samplesDir: (evalId: string) => join(home, 'results', evalId, 'samples'),
    modeADir: (id: string) => join(home, 'mode-a', id),
    runDir: (evalId: string, runId: string) => join(home, 'runs', evalId, runId),
  };
}

export function runPaths(runDir: string) {
  const jobsDir = join(runDir, 'jobs');
  return {
    preflightLog: join(runDir, 'preflight.harbor.log'),
    /** The Harbor job config (`-c`) with what Harbor has no flags for: the retry backoff. */
    harborJobConfig: join(runDir, 'harbor-job-config.json'),
    harborCwd: join(runDir, 'harbor-cwd'),
    chunkFile: (chunkIndex: number) => join(runDir, 'chunks', `${index5(chunkIndex)}.json`),
    staleJob: (jobName: string, attempt: number, launch: number) => join(runDir, 'stale-jobs', `${jobName}-${attempt}-${launch}`),
    jobsDir,
    job: (jobName: string) => ({
      dir: join(jobsDir, jobName),
      harborLog: join(jobsDir, `${jobName}.harbor.log`),
      pidFile: join(jobsDir, `${jobName}.pid`),
      failuresFile: join(jobsDir, `${jobName}.harbor-failures`),
    }),
  };
}

/** Harbor's own layout inside a job dir (reference/harbor.md §1.5). */
export const harborJobFiles = {
  config: (jobDir: string) => join(jobDir, 'config.json'),
  lock: (jobDir: string) => join(jobDir, 'lock.json'),
  result: (jobDir: string) => join(jobDir, 'result.json'),
  trialResult: (jobDir: string, trial: string) => join(jobDir, trial, 'result.json'),
};

/** The child workflow that runs chunk `i` of an evaluation. */
export const chunkWorkflowId = (evalId: string, i: number): string => `${evalId}/chunk-${i}`;
