/** The signals of spend caps and spend pools, and a pool's query (workflows/spend-meter.ts, spend-pool.ts, chunk-spend-stop.ts). */
import { defineQuery, defineSignal } from '@temporalio/workflow';

/**
 * Spend caps (model/evaluation/spend-cap.ts). A chunk of a capped evaluation reports each finished task's spend to its
 * parent (`taskSpent`); once a cap is reached the parent starts nothing more and tells every running chunk
 * (`spendCapReached`, with the reason in words): a chunk then starts no task, lets the running ones finish
 * (or stops them after the grace period) and writes the rest as `not_run` rows. A spend pool tells each of
 * its evaluations the same way.
 */
export interface SpendSignal {
  chunkIndex: number;
  costUsd: number;
  tokens: number;
  unmetered: number;
  /**
   * Set by a lane that goes on to another task (patched 'spend-verdict-before-next-task'): the lane waits for
   * the parent's `spendMetered` with this number (the cap check this spend fed) before it starts anything.
   */
  seq?: number;
  /** The task (patched 'reset-safe-chunks'): the spend is then the task's total, counted once (model/evaluation/spend-cap.ts). */
  task?: string;
  /** The sending chunk's workflow id and run (patched 'reset-safe-chunks'): the verdict goes to that chunk. */
  chunkId?: string;
  chunkRunId?: string;
}
export const taskSpentSignal = defineSignal<[SpendSignal]>('taskSpent');
export const spendCapReachedSignal = defineSignal<[string]>('spendCapReached');
/** The parent's answer to a `taskSpent` with a `seq`: metered, and the cap reached (in words) or null. */
export const spendMeteredSignal = defineSignal<[{ seq: number; reached: string | null }]>('spendMetered');

/**
 * A spend pool (workflows/spend-pool.ts): evaluations that name it join, forward each task's spend, and leave
 * when they end; once its caps are reached it sends `spendCapReached` to every member (and to any that joins).
 */
export const poolJoinSignal = defineSignal<[{ evalId: string }]>('poolJoin');
/** With `task`, the spend is that task's total, counted once however often it comes (a reset evaluation's reports). */
export const poolSpentSignal =
  defineSignal<[{ evalId: string; costUsd: number; tokens: number; unmetered: number; ack?: number; task?: string }]>('poolSpent');
/** The pool's answer to a `poolSpent` with an `ack`: metered, and its cap reached (in words) or null. */
export const poolMeteredSignal = defineSignal<[{ ack: number; reached: string | null }]>('poolMetered');
export const poolLeaveSignal = defineSignal<[{ evalId: string }]>('poolLeave');

/** A spend pool's state, for `vero spend-pool` and for start-eval's check of its caps. */
export interface SpendPoolState {
  name: string;
  maxCostUsd: number | null;
  maxTokens: number | null;
  spent: { costUsd: number; tokens: number; unmetered: number };
  reached: string | null;
  /** Evaluations running now that draw on it. */
  members: string[];
  /** Every evaluation that ever joined, with what it spent. */
  spentBy: Record<string, { costUsd: number; tokens: number }>;
}
export const spendPoolQuery = defineQuery<SpendPoolState>('spendPool');
