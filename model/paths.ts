/**
 * Where vero-harbor keeps things: the one place the on-disk layout is spelled. Pure string joins (workflow code
 * uses it too); homes and run dirs are absolute POSIX paths.
 *
 * ```
 * <home>/
 *   temporal.db                      `vero dev`'s and the sidecar's dev server SQLite file (the durability)
 *   repos/<digest>.git               this host's bare copy of an agent repo (a path or a git URL)
 *   worktrees/<commit>/              a candidate's checkout (this host's)
 *   results/<evalId>.json            an evaluation's final result (CandidateResult + rows)
 *   results/<evalId>/samples/<i>.json  Mode B rows as sidecar samples
 *   mode-a/<id>/                     a Mode A evaluation (ModeAPaths): inputs, outputs, scores, logs, result.json
 *   runs/<evalId>/<runId>/           one run of an evaluation workflow (RunPaths)
 *     preflight.harbor.log           `harbor run --dry-run` output
 *     registry.json                  the dataset's registry.json with its task paths made absolute
 *     harbor-cwd/                    harbor's working directory (nothing of the candidate's in it)
 *     chunks/<00000>.json            a chunk's rows, for finalize
 *     stale-jobs/<job>-<a>-<l>/      job dirs Harbor refused to resume (set aside, never deleted)
 *     jobs/                          harbor's jobs dir (`-o`)
 *       <job>/                       one task's Harbor job (its layout: model/harbor/paths.ts)
 *       <job>.harbor.log             harbor's output; `# vero-harbor attempt <a>.<l>` before each start
 *       <job>.pid                    the running harbor (pid, host, start), for adoption after a worker crash
 *       <job>.harbor-failures        Harbor failures counted by earlier attempts on this host
 *       <job>.pruned-usage.json      what the trials vero removed before a retry (or set aside) spent, by trial
 * ```
 */

const join = (...parts: string[]): string => parts.join('/').replace(/\/{2,}/g, '/');

/** Files are named by index in a sortable way. */
const index5 = (i: number): string => String(i).padStart(5, '0');

export function homePaths(home: string) {
  return {
    reposDir: join(home, 'repos'),
    mirror: (repoDigest: string) => join(home, 'repos', `${repoDigest}.git`),
    worktreesDir: join(home, 'worktrees'),
    worktree: (commit: string) => join(home, 'worktrees', commit),
    resultsDir: join(home, 'results'),
    resultFile: (evalId: string) => join(home, 'results', `${evalId}.json`),
    /** An evaluation's dir beside its result file (its samples). */
    resultDir: (evalId: string) => join(home, 'results', evalId),
    samplesDir: (evalId: string) => join(home, 'results', evalId, 'samples'),
    modeADir: (id: string) => join(home, 'mode-a', id),
    temporalDb: join(home, 'temporal.db'),
    runsDir: join(home, 'runs'),
    /** Every run dir of one evaluation. */
    evalRunsDir: (evalId: string) => join(home, 'runs', evalId),
    runDir: (evalId: string, runId: string) => join(home, 'runs', evalId, runId),
  };
}

export function runPaths(runDir: string) {
  const jobsDir = join(runDir, 'jobs');
  return {
    preflightLog: join(runDir, 'preflight.harbor.log'),
    resolvedRegistry: join(runDir, 'registry.json'),
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
      prunedUsageFile: join(jobsDir, `${jobName}.pruned-usage.json`),
    }),
  };
}

/** A Mode A evaluation's files (activities/mode-a.ts), in its dir. */
export function modeAPaths(dir: string) {
  return {
    inputs: join(dir, 'inputs.jsonl'),
    outputs: join(dir, 'outputs.jsonl'),
    inferenceLog: join(dir, 'inference.log'),
    toScore: join(dir, 'to-score.jsonl'),
    scores: join(dir, 'scores.jsonl'),
    scorerLog: join(dir, 'scorer.log'),
    result: join(dir, 'result.json'),
  };
}

/** A Mode A command harness's files in its evaluation's dir: its request, report, artifacts, log and our result. */
export function harnessPaths(dir: string) {
  return {
    request: join(dir, 'request.json'),
    report: join(dir, 'report.json'),
    artifacts: join(dir, 'artifacts'),
    log: join(dir, 'harness.log'),
    result: join(dir, 'result.json'),
  };
}

/** Whether a file of a jobs dir is a job's pid file (`<job>.pid`). */
export const isPidFile = (name: string): boolean => name.endsWith('.pid');

/** Whether a file of a jobs dir is a job's harbor log (`<job>.harbor.log`). */
export const isHarborLog = (name: string): boolean => name.endsWith('.harbor.log');

/** The parts of a home-relative path below a run's jobs dir (`runs/<evalId>/<runId>/jobs/…`), else null. */
export function belowRunJobsDir(parts: string[]): string[] | null {
  return parts.length > 4 && parts[0] === 'runs' && parts[3] === 'jobs' ? parts.slice(4) : null;
}

/** `<db>.pid`: the dev server that owns a SQLite file, so a later start can find one left behind. */
export const devServerPidFile = (dbFile: string): string => `${dbFile}.pid`;

/** `vero demo --optimize`'s home: the examples it copies, the tasks it builds, the jobs it runs. */
export function demoOptimizePaths(home: string) {
  return {
    examples: join(home, 'examples'),
    taskDir: (name: string) => join(home, 'tasks', name),
    jobsDir: (name: string) => join(home, 'jobs', name),
  };
}

/** `<jobsDir>/<job>.harbor.log`: harbor's output for a job (next to its dir), as `runPaths(…).job(…).harborLog`. */
export const harborLogOf = (jobDir: string): string => `${jobDir}.harbor.log`;

/**
 * The child workflow that runs chunk `i` of an evaluation. After a reset, a chunk whose id a chunk of the run reset
 * away still holds gets the next one (`<evalId>/chunk-<i>.<n>`, n = 1, 2, …; workflows/lane-grants.ts).
 */
export const chunkWorkflowId = (evalId: string, i: number, n = 0): string => `${evalId}/chunk-${i}${n > 0 ? `.${n}` : ''}`;
