/** One task's row in an evaluation's result: scored, an error (never a silent 0), or not run (a spend cap). */
import type { TaskStatus, Usage } from './harbor/trial-ranking';

export type { TaskStatus };

/** What a retried row (`vero retry`) says about the row it replaced. */
export interface RetriedFrom {
  at: string;
  previous: { status: TaskStatus; score: number | null; error: string | null };
}

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
