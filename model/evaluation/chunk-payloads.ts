/**
 * The evaluateChunk child workflow's input and summary. Small by design: pointers to files, never trial blobs;
 * field names are recorded in workflow histories.
 */
import type { EvalSettings } from './input';
import type { TaskResult } from './task-result';

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
   * Lanes this chunk starts with, under the lane-grant protocol (workflows/lane-signals.ts): more may be granted,
   * and drained lanes are handed back. Absent: `concurrency` lanes of its own (histories recorded before).
   */
  lanes?: number;
  /**
   * false: return the summary without the rows (they are in this chunk's file and history), so the parent's
   * history holds no per-task payload. Absent: the rows come back too (histories recorded before).
   */
  returnRows?: boolean;
  /** Send the parent this chunk's counts as its tasks finish (`chunkProgress`); absent in histories recorded before. */
  reportProgress?: boolean;
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
