/**
 * The activities' inputs: what crosses the workflow/activity boundary, small by design, pointers to files.
 * Pure types.
 */
import type { EvalSettings } from './input';
import type { HarnessSpec } from '../compiled-task/command-harness';
import type { TaskResult } from './task-result';
import type { Spend } from './spend-cap';
import type { RetryOf } from './retry';

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
  /**
   * Whether the activity tells its workflow when the task's harbor has done its work (`taskWorkDone`,
   * model/evaluation/lane-teardown.ts), so its lane can start the next task during the teardown (absent in older histories).
   */
  reportsWorkDone?: boolean;
}

export interface PrepareCandidateInput {
  agentRepo: string;
  candidate: string;
  home: string;
}

/** The candidate as a commit, checked out on this host. */
export interface PreparedCandidate {
  commit: string;
  worktree: string;
}

/** A run of the task whose argv is checked (the first of the evaluation). */
export type PreflightInput = Omit<RunTaskInput, 'reportsWorkDone'>;

export interface SaveChunkInput {
  runDir: string;
  chunkIndex: number;
  results: TaskResult[];
}

export interface FinalizeInput {
  evalId: string;
  candidate: string;
  candidateRef: string;
  home: string;
  runDir: string;
  nChunks: number;
  configDigest: string;
  settings: EvalSettings;
  /** Ignored (always the whole dataset here); optional so histories that recorded `split: null` replay. */
  split?: string | null;
  startedAt: string;
  /** Dataset dirs that are not tasks (from the evaluation's input), recorded in the result file. */
  skippedDirs?: { dir: string; reason: string }[];
  /** The rows, when they came through Temporal; else read from the chunk files (a shared home). */
  tasks?: TaskResult[];
  /**
   * A spend-capped evaluation's meter: what was spent, the cap reached (or null), and the tasks of the chunks
   * that never started (their rows are `not_run`). `nChunks` counts only the chunks that started.
   */
  spend?: { spent: Spend; reached: string | null; notStarted: string[] };
  /** A `vero retry` run: its rows replace those of the same tasks in this result file (model/evaluation/retry.ts). */
  retryOf?: RetryOf;
}

export interface ModeAInput {
  /** The workflow id: names the files of this evaluation. */
  id: string;
  repo: string;
  commit: string;
  home: string;
  datasetDir: string;
  split: string;
  ids: number[];
  inference: string[];
  scorer: { command: string[]; cwd: string };
  timeoutSec: number;
  /** Variables for the inference (the gateway's evaluation token and base URL), read here, never in history. */
  envFile?: string;
  /** A command harness scores instead of inference and scorer (which are then unused): model/compiled-task/command-harness.ts. */
  harness?: HarnessRun;
}

/** A command harness's evaluation: the harness, the cases' names, the metric that is the score, and its OS user. */
export interface HarnessRun {
  spec: HarnessSpec;
  cases: string[];
  metric: string;
  runAs: string | null;
}

export interface BuildTaskInput {
  configFile: string;
  outDir: string;
  skipSecretCheck?: boolean;
  /** `--param NAME=VALUE`s for the build file's `${NAME}` placeholders. */
  params?: Record<string, string>;
  /** `--registry-path` (absolute) / `--registry-url`: the legacy registry a registry task source is resolved in. */
  registry?: { path?: string; url?: string };
}
