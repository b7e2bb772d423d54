/**
 * Spend caps (`execution.max_cost_usd`, `execution.max_tokens`): what an evaluation (or a spend pool shared by
 * several) may spend before no new task starts. Spend is what Harbor's trial results report (`cost_usd`,
 * `n_input_tokens + n_output_tokens`), metered as each task finishes. Pure: the workflows use these rules.
 */
import { z } from 'zod';
import type { Usage } from '../harbor/trial-ranking';

export const SpendCap = z.strictObject({
  maxCostUsd: z.number().positive().optional(),
  maxTokens: z.number().int().positive().optional(),
  /** How long running tasks may go on once the cap is reached before they are stopped; absent: they finish. */
  graceSec: z.number().positive().optional(),
  /** A spend pool's name: the caps are the pool's, over every evaluation that names it (workflows/spend-pool.ts). */
  pool: z.string().min(1).optional(),
});
export type SpendCap = z.infer<typeof SpendCap>;

/** What has been spent (Spend); `unmetered`: finished tasks whose trials reported neither a cost nor tokens. */
export const SpendJson = z.strictObject({ costUsd: z.number(), tokens: z.number(), unmetered: z.number().int() });
/** The spend part of an evaluation's result, present when a cap was set (SpendReport). */
export const SpendReportJson = z.strictObject({
  maxCostUsd: z.number().nullable(),
  maxTokens: z.number().nullable(),
  pool: z.string().nullable(),
  /** What this evaluation's finished tasks spent. */
  spent: SpendJson,
  /** Why tasks were not run (the cap reached, in words), or null when every task ran. */
  reached: z.string().nullable(),
  /** Tasks that never started, or were stopped after the grace period: status `not_run`. */
  nNotRun: z.number().int(),
});
/**
 * What has been spent: dollars and tokens (input + output) as the trials reported them, and the finished tasks whose
 * trials reported neither (a cap cannot see what they spent).
 */
export type Spend = z.infer<typeof SpendJson>;

export const NO_SPEND: Spend = { costUsd: 0, tokens: 0, unmetered: 0 };

/** One finished task's spend. */
export function spendOfTask(usage: Usage | undefined): Spend {
  const cost = usage?.costUsd ?? null;
  const tokens =
    usage && (usage.inputTokens !== null || usage.outputTokens !== null) ? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) : null;
  return { costUsd: cost ?? 0, tokens: tokens ?? 0, unmetered: cost === null && tokens === null ? 1 : 0 };
}

export const addSpend = (a: Spend, b: Spend): Spend => ({
  costUsd: a.costUsd + b.costUsd,
  tokens: a.tokens + b.tokens,
  unmetered: a.unmetered + b.unmetered,
});

/**
 * A finished task's report, as a chunk sends it: the task's total spend (every trial its job ran, pruned ones
 * included), with the task's name. Reports without one come from histories recorded before.
 */
export type TaskSpend = Spend & { task?: string };

/**
 * What a task's report adds, so a task's spend is counted once, however often it is reported (a reset
 * evaluation reports again; a task whose finished job is collected after a reset reports the same total): the
 * report is the task's total, `counted` holds the total counted so far per task (updated here), and only what
 * goes beyond it is added. A report without a task name adds all it says.
 */
export function spendToAdd(counted: Record<string, Spend>, report: TaskSpend): Spend {
  const { task, ...spend } = report;
  if (task === undefined) return spend;
  const before = counted[task] ?? NO_SPEND;
  const after: Spend = {
    costUsd: Math.max(before.costUsd, spend.costUsd),
    tokens: Math.max(before.tokens, spend.tokens),
    unmetered: Math.max(before.unmetered, spend.unmetered),
  };
  counted[task] = after;
  return { costUsd: after.costUsd - before.costUsd, tokens: after.tokens - before.tokens, unmetered: after.unmetered - before.unmetered };
}

/** The cap that `spent` reached, in words for a person (`max_cost_usd $5.00 reached: $5.12 spent`), or null. */
export function capReached(cap: SpendCap, spent: Spend): string | null {
  if (cap.maxCostUsd !== undefined && spent.costUsd >= cap.maxCostUsd)
    return `max_cost_usd $${cap.maxCostUsd.toFixed(2)} reached ($${spent.costUsd.toFixed(4)} spent${cap.pool ? ` in spend pool ${cap.pool}` : ''})`;
  if (cap.maxTokens !== undefined && spent.tokens >= cap.maxTokens)
    return `max_tokens ${cap.maxTokens} reached (${spent.tokens} spent${cap.pool ? ` in spend pool ${cap.pool}` : ''})`;
  return null;
}

/** The spend part of an evaluation's result (present when a cap was set). */
export type SpendReport = z.infer<typeof SpendReportJson>;

/** The workflow id of a spend pool (one per name and namespace). */
export const spendPoolWorkflowId = (pool: string): string => `vero-spend-pool-${pool}`;

/** Pool names are part of a workflow id and of a config file: keep them plain. */
export const SPEND_POOL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
