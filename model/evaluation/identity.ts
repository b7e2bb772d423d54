/** Identity of an evaluation: the same candidate and score-relevant config give the same workflow id. */
import { createHash } from 'node:crypto';
import type { EvalSettings } from './input';
import { SCORING_RULES_VERSION } from '../harbor/trial-ranking';

/** Canonical JSON: object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * Digest of everything that changes the score: the task list, the task source, the harbor config (launcher,
 * agent, model, attempts, retries, multipliers, extra args), the scoring settings and the scoring rules' version
 * (absent for version 1, so the evaluations scored before it existed keep their ids). Concurrency, timeouts and
 * Temporal settings are operational and left out. Spend caps count when set (a capped evaluation may end with
 * tasks not run), except the grace period.
 */
export function configDigest(tasks: string[], s: EvalSettings, scoringRules: number = SCORING_RULES_VERSION): string {
  const scoreRelevant = {
    tasks,
    source: s.source,
    harbor: s.harbor,
    rewardKey: s.rewardKey,
    aggregate: s.aggregate,
    errorRateThreshold: s.errorRateThreshold,
    ...(scoringRules !== 1 ? { scoringRules } : {}),
    ...(s.spendCap ? { spendCap: { maxCostUsd: s.spendCap.maxCostUsd, maxTokens: s.spendCap.maxTokens, pool: s.spendCap.pool } } : {}),
  };
  return createHash('sha256').update(canonicalJson(scoreRelevant)).digest('hex');
}

export function evalWorkflowId(commit: string, digest: string): string {
  return `eval-${commit}-${digest.slice(0, 16)}`;
}
