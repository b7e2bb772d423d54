/**
 * Payloads that cross the workflow/activity boundary. Small by design: pointers to files, never trial blobs.
 * These modules are imported by workflow code, so they must stay deterministic (zod only, no I/O).
 *
 * Words (field names are recorded in workflow histories, so they stay as they are):
 * - `candidate`: the candidate's full commit sha (EvalInput, ChunkInput, CandidateResult); `candidateRef`: what
 *   the user asked for (a tag, a branch, a short sha). PrepareCandidateInput.candidate is that ref, before it
 *   is resolved.
 * - `CandidateSource`: where a worker checks the candidate out from (repo, commit, home); `worktree`: the
 *   checkout's path on a worker.
 * - Mode A is the `evaluateSamples` workflow (inference + trusted scorer, activity `runModeA`); Mode B is an
 *   evaluation of Harbor tasks (`evaluateCandidate`). `vero build` compiles a build.yaml (the compiler).
 */
import { z } from 'zod';
import type { AttemptStats, ScoreUncertainty } from './uncertainty';
import { HarborSection } from './harbor-config';
import { SpendCap, type SpendReport } from './spend-cap';
import { PauseState } from './pause-state';
import { RetryOf, type RetriedFrom, type RetryRecord } from './retry';
import type { TaskStatus, Usage } from './trial-ranking';

export type { TaskStatus };

export const ResolvedSource = z.strictObject({
  path: z.string().optional(),
  dataset: z.string().optional(),
  registry_path: z.string().optional(),
});

export const EvalSettings = z.strictObject({
  harbor: HarborSection,
  source: ResolvedSource,
  rewardKey: z.string().nullable(),
  aggregate: z.enum(['best', 'mean']),
  errorRateThreshold: z.number().min(0).max(1),
  concurrency: z.number().int().min(1),
  taskTimeoutSec: z.number().positive(),
  taskAttempts: z.number().int().min(1),
  heartbeatTimeoutSec: z.number().positive(),
  chunkSize: z.number().int().min(1),
  /** Chunks per run of the parent before it continues as new (model/history-bounds.ts); absent: by concurrency. */
  chunksPerRun: z.number().int().min(1).optional(),
  /**
   * How long a stopped harbor gets to tear its trials down (SIGTERM, then SIGKILL of the group and removal of
   * what the trials left in Docker). Optional so evaluations started before it existed replay; default 60 s.
   */
  stopGraceSec: z.number().positive().optional(),
  /** Run `harbor run --dry-run` once before the tasks (Harbor ≥ 0.25). Absent means yes. */
  preflight: z.boolean().optional(),
  /**
   * Isolation of the candidate's harness (the eval sidecar sets these): run harbor as this OS user, with only
   * PATH/HOME/LANG plus `harbor.env`, the named variables of this process's environment, and the variables of
   * `envFile` (a trusted-side JSON file, e.g. the gateway's scoped token: values that must not enter history).
   */
  isolation: z.strictObject({ runAs: z.string().nullable(), passEnv: z.array(z.string()), envFile: z.string().optional() }).optional(),
  /** Spend caps (model/spend-cap.ts); absent: none (and in histories recorded before they existed). */
  spendCap: SpendCap.optional(),
});
export type EvalSettings = z.infer<typeof EvalSettings>;

export const EvalInput = z.strictObject({
  /** The workflow id (also the result file's name). */
  evalId: z.string().min(1),
  /** The candidate's full commit sha, resolved by the client. */
  candidate: z.string().regex(/^[0-9a-f]{40}$/, 'expected a full 40-hex commit sha'),
  /** What the user asked for (a tag, a short sha), for display. */
  candidateRef: z.string(),
  agentRepo: z.string().min(1),
  home: z.string().min(1),
  tasks: z.array(z.string().min(1)).min(1),
  configDigest: z.string(),
  settings: EvalSettings,
  /** Dirs of the dataset that are not Harbor tasks, with the reason (shown, never dropped silently). */
  skippedDirs: z.array(z.strictObject({ dir: z.string(), reason: z.string() })).optional(),
  /** A run of `vero retry`: `tasks` are the ones run again, merged into this result file (model/retry.ts). */
  retryOf: RetryOf.optional(),
});
export type EvalInput = z.infer<typeof EvalInput>;

/**
 * What a run of the evaluation workflow hands to the next when it continues as new (model/history-bounds.ts):
 * the candidate as prepared, the run dir of the first run (its chunk files), and the chunks done so far.
 */
export const Continuation = z.strictObject({
  commit: z.string(),
  worktree: z.string(),
  runDir: z.string(),
  startedAt: z.string(),
  /** The first chunk this run starts; the ones before it are done. */
  nextChunk: z.number().int().min(1),
  done: z.strictObject({ done: z.number(), scored: z.number(), errors: z.number(), scoreSum: z.number(), notRun: z.number().optional() }),
  /** What the evaluation's finished tasks spent so far (a spend-capped evaluation). */
  spent: z.strictObject({ costUsd: z.number(), tokens: z.number(), unmetered: z.number() }).optional(),
  /** The concurrency in force (it may have been changed by `vero set-concurrency`). */
  concurrency: z.number().int().min(1).optional(),
  /** Set while the evaluation is paused (`vero pause`): the next run starts paused. */
  paused: PauseState.optional(),
});
export type Continuation = z.infer<typeof Continuation>;

/** One task's outcome. Small: the job dir holds everything else. */
export interface TaskResult {
  task: string;
  status: TaskStatus;
  score: number | null;
  metrics: Record<string, number>;
  trial: string | null;
  taskName: string | null;
  nTrials: number;
  /** Temporal activity attempts (harbor runs) this task took. */
  runs: number;
  exceptions: string[];
  timedOut: boolean;
  /** The task's Harbor job dir (`<run>/jobs/<job>`); for a task a spend cap kept from starting, the jobs dir. */
  jobDir: string;
  error: string | null;
  /** Cost and tokens of all the task's trials (absent in results recorded before it existed). */
  usage?: Usage;
  /** Each validly rewarded trial's reward, in trial-name order (absent in results recorded before it existed). */
  trialRewards?: number[];
  /** Trials whose reward Harbor's error policy marks not valid, never scored (absent before it existed, and when none). */
  nInvalidTrials?: number;
  /** Why: each distinct `ExceptionType (what it is)`. */
  invalidReasons?: string[];
  /** The Harbor version that ran the job (its lock.json). */
  harborVersion?: string | null;
  /** Things the user should know about how the row came to be (e.g. a job restarted in a fresh dir). */
  notes?: string[];
  /** Set on a row `vero retry` ran again: when, and the row it replaced. */
  retried?: RetriedFrom;
}

/** What a worker needs to check a candidate out on its own host. */
export interface CandidateSource {
  agentRepo: string;
  commit: string;
  home: string;
}

/** The runTask activity's input: one task of one evaluation run. */
export interface RunTaskInput {
  runDir: string;
  task: string;
  worktree: string;
  settings: EvalSettings;
  /** Where the candidate comes from, so any worker can materialize `worktree` (absent in older histories). */
  candidate?: CandidateSource;
}

export interface ChunkInput {
  chunkIndex: number;
  runDir: string;
  candidate: string;
  worktree: string;
  tasks: string[];
  settings: EvalSettings;
  /** For workers to materialize the candidate themselves (absent in histories recorded before). */
  agentRepo?: string;
  home?: string;
  /**
   * Lanes this chunk starts with, under the lane-grant protocol (workflows/queries.ts): more may be granted,
   * and drained lanes are handed back. Absent: `concurrency` lanes of its own (histories recorded before).
   */
  lanes?: number;
  /**
   * false: return the summary without the rows (they are in this chunk's file and history), so the parent's
   * history holds no per-task payload. Absent: the rows come back too (histories recorded before).
   */
  returnRows?: boolean;
}

export interface ChunkSummary {
  chunkIndex: number;
  nTasks: number;
  nScored: number;
  nErrors: number;
  scoreSum: number;
  /** Rows `not_run` (a spend cap); absent when none. */
  nNotRun?: number;
  /** The chunk's rows, carried through Temporal to finalize (so it reads no file another worker wrote). */
  results?: TaskResult[];
}

/** completed; failed (error rate ≥ threshold); budget_exhausted (a spend cap kept tasks from running). */
export type EvalStatus = 'completed' | 'failed' | 'budget_exhausted';

export interface CandidateResult {
  evalId: string;
  candidate: string;
  candidateRef: string;
  status: EvalStatus;
  /** Mean over the tasks that ran (all of them unless a spend cap stopped it: see nRun), errors counted as 0. */
  score: number;
  /** Mean over scored tasks only; null when none scored. */
  scoreOfScored: number | null;
  /** The score's standard error and 95% interval over tasks (model/uncertainty.ts); absent in older results. */
  uncertainty?: ScoreUncertainty;
  /** With k ≥ 2 trials per task: pass@k, pass^k and the within-task spread (model/uncertainty.ts). */
  attempts?: AttemptStats | null;
  errorsCountedAsZero: true;
  nTasks: number;
  nScored: number;
  nErrors: number;
  errorRate: number;
  errorRateThreshold: number;
  configDigest: string;
  resultFile: string;
  /** Per-task results, inline up to INLINE_TASK_LIMIT tasks; read resultFile beyond that. */
  tasks: TaskResult[] | null;
  startedAt: string;
  finishedAt: string;
  /** Cost and tokens summed over all tasks. */
  usage?: Usage;
  /** The Harbor versions that ran the tasks (one, normally). */
  harborVersions?: string[];
  /** Trials, over all tasks, whose reward Harbor's error policy marks not valid (absent when none). */
  nInvalidTrials?: number;
  /** Dataset dirs that are not tasks, with the reason. */
  skippedDirs?: { dir: string; reason: string }[];
  /** The spend caps and what was spent, when a cap was set (model/spend-cap.ts). */
  spend?: SpendReport;
  /** Tasks that ran (nTasks − nNotRun): the score's, errorRate's and uncertainty's denominator. */
  nRun?: number;
  /** Each `vero retry` of this evaluation: when, and which tasks ran again (their rows say what they replaced). */
  retries?: RetryRecord[];
}

export const INLINE_TASK_LIMIT = 1000;

export interface Progress {
  total: number;
  done: number;
  running: number;
  scored: number;
  errors: number;
  scoreSum: number;
  /** Tasks a spend cap kept from running (counted in `done`, not in `scored` or `errors`). */
  notRun?: number;
  /** The spend cap reached, in words (model/spend-cap.ts), once it is. */
  spendCapReached?: string;
  /** `cancelling`: a cancel was received; `running` counts the tasks whose harbors are still being stopped. */
  phase: 'preparing' | 'running' | 'finalizing' | 'done' | 'cancelling';
  /** The chunk workflow running now (query it for in-chunk progress). */
  currentChunk: string | null;
  /** Every chunk workflow running now (chunks overlap under lane grants); supersedes currentChunk. */
  runningChunks?: string[];
  /** The concurrency in force (an evaluation's, after any `vero set-concurrency`). */
  concurrency?: number;
  /** Set while the evaluation is paused (`vero pause`): no task starts until `vero resume`. */
  paused?: PauseState;
}

/**
 * What a closed evaluation's last progress snapshot means now: nothing runs any more (a cancelled or failed
 * workflow answers the query with the state it stopped in). `stopped` counts the tasks that were running.
 */
export function settledProgress(p: Progress, workflowStatus: string): SettledProgress {
  if (workflowStatus === 'RUNNING') return p;
  const phase = CLOSED_PHASE[workflowStatus] ?? p.phase;
  if (p.running === 0) return { ...p, phase };
  return { ...p, phase, running: 0, stopped: p.running, runningChunks: [], currentChunk: null };
}

/** The phase of a closed evaluation, by its workflow status: it says how it ended, not where it was. */
const CLOSED_PHASE: Record<string, SettledProgress['phase']> = {
  COMPLETED: 'done',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
};

/** A progress as `vero status` reports it: a closed evaluation's phase is how it ended. */
export type SettledProgress = Omit<Progress, 'phase'> & {
  phase: Progress['phase'] | 'failed' | 'cancelled' | 'terminated' | 'timed_out';
  stopped?: number;
};

/** A fresh progress record (the workflows' query state). */
export function newProgress(total: number, phase: Progress['phase']): Progress {
  return { total, done: 0, running: 0, scored: 0, errors: 0, scoreSum: 0, phase, currentChunk: null };
}

/** The start of a Mode A row's error when the candidate's inference gave no output for it (its own failure). */
export const NO_INFERENCE_OUTPUT = 'no output from inference';

/** The row of a task whose attempts all failed (timeouts, crashes, no trial with a reward): never a silent 0. */
export function errorRow(task: string, error: string, runs: number, jobDir: string): TaskResult {
  return {
    task,
    status: 'error',
    score: null,
    metrics: {},
    trial: null,
    taskName: null,
    nTrials: 0,
    runs,
    exceptions: [],
    timedOut: false,
    jobDir,
    error,
  };
}

/** Counts a finished task's row into a chunk's progress. */
export function countFinished(progress: Progress, row: TaskResult): void {
  progress.done++;
  if (row.status === 'scored') {
    progress.scored++;
    progress.scoreSum += row.score ?? 0;
  } else if (row.status === 'not_run') progress.notRun = (progress.notRun ?? 0) + 1;
  else progress.errors++;
}

/** The row of a task a spend cap kept from running (or stopped after the grace period): not scored, not an error. */
export function notRunRow(task: string, why: string, jobDir: string): TaskResult {
  return {
    task,
    status: 'not_run',
    score: null,
    metrics: {},
    trial: null,
    taskName: null,
    nTrials: 0,
    runs: 0,
    exceptions: [],
    timedOut: false,
    jobDir,
    error: why,
  };
}

/** The score of each task as the evaluation's score counts it (an error is 0). */
export const countedTaskScores = (tasks: TaskResult[]): number[] => tasks.map((t) => (t.status === 'scored' ? (t.score ?? 0) : 0));
