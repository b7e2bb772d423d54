/**
 * Choosing and scoring trials, pure. Ranking is total and independent of directory order (vero.md §6.1 #2):
 * a valid reward (model/harbor/error-policy.ts) > clean (rewards and no exception) > has rewards > later
 * finished_at > content tie-break. Only valid rewards score: a reward Harbor marks not valid (a model-provider
 * failure, a spent budget, a failed verifier) is the infrastructure's, never the candidate's.
 */
import { createHash } from 'node:crypto';
import { rewardValidity } from './error-policy';
import { parseHarborTime, type TrialResult } from './result';
import type { CollatedRow, Usage } from '../evaluation/task-result';

export interface LoadedTrial {
  result: TrialResult;
  /** The result.json path. */
  file: string;
  /**
   * sha256 of the result's content: the last, total tie-break. Computed only when two trials tie on
   * everything else (see `digestOf`); tests may set it.
   */
  digest?: string;
}

/** The tie-break digest of a trial (of its canonical JSON content), computed once, on demand. */
function digestOf(t: LoadedTrial): string {
  t.digest ??= createHash('sha256').update(JSON.stringify(t.result)).digest('hex');
  return t.digest;
}

export type Aggregation = 'best' | 'mean';

export function rewardsOf(t: TrialResult): Record<string, number> | null {
  const r = t.verifier_result?.rewards;
  return r && Object.keys(r).length > 0 ? r : null;
}

function isClean(t: TrialResult): boolean {
  return rewardsOf(t) !== null && !t.exception_info;
}

/** Rewards that count: the trial has rewards and Harbor's error policy leaves them valid. */
export function hasValidReward(t: TrialResult): boolean {
  return rewardsOf(t) !== null && rewardValidity(t).valid;
}

/** Rewards that do not count (Harbor marks them not valid). */
export function hasInvalidReward(t: TrialResult): boolean {
  return rewardsOf(t) !== null && !rewardValidity(t).valid;
}

const rankKey = (t: LoadedTrial) =>
  [
    hasValidReward(t.result) ? 1 : 0,
    isClean(t.result) ? 1 : 0,
    rewardsOf(t.result) ? 1 : 0,
    parseHarborTime(t.result.finished_at) ?? -Infinity,
  ] as const;

function compareKeyed(a: { t: LoadedTrial; k: ReturnType<typeof rankKey> }, b: { t: LoadedTrial; k: ReturnType<typeof rankKey> }): number {
  for (let i = 0; i < a.k.length; i++) if (a.k[i] !== b.k[i]) return a.k[i]! > b.k[i]! ? -1 : 1;
  if (a.t.result.trial_name !== b.t.result.trial_name) return a.t.result.trial_name < b.t.result.trial_name ? -1 : 1;
  const da = digestOf(a.t);
  const db = digestOf(b.t);
  return da < db ? -1 : da > db ? 1 : 0;
}

/** Negative when a ranks above b. */
export function compareTrials(a: LoadedTrial, b: LoadedTrial): number {
  return compareKeyed({ t: a, k: rankKey(a) }, { t: b, k: rankKey(b) });
}

/** Trials best first; each trial's sort key is computed once. */
export function rankTrials(trials: LoadedTrial[]): LoadedTrial[] {
  return trials
    .map((t) => ({ t, k: rankKey(t) }))
    .sort(compareKeyed)
    .map((x) => x.t);
}

/** The primary reward: `rewardKey`, else `pass`, else `reward`, else the mean of all values. */
export function extractReward(rewards: Record<string, number>, rewardKey?: string | null): number {
  for (const k of [rewardKey, 'pass', 'reward']) if (k && rewards[k] !== undefined) return rewards[k];
  const values = Object.values(rewards);
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

export type { Usage } from '../evaluation/task-result';

/**
 * The version of the scoring rules: how a task's trials are ranked and which one is chosen, and how a task and an
 * evaluation are scored from them. Raise it with any change to those rules: it is part of an evaluation's identity
 * (model/evaluation/identity.ts), so `vero start-eval` does not attach to an evaluation scored under another rule, and
 * `vero compare` (its config warning), `vero best` and `vero race` (which take evaluations of one config digest)
 * do not take one for the other. 1: the rules every evaluation was scored by before the version existed.
 */
export const SCORING_RULES_VERSION = 1;

/** A task's score: the scoring fields of its collated row, with the trial counts ranking knows. */
export type TaskScore = Pick<
  CollatedRow,
  'status' | 'score' | 'metrics' | 'trial' | 'nTrials' | 'exceptions' | 'error' | 'usage' | 'trialRewards'
> &
  Required<Pick<CollatedRow, 'nInvalidTrials' | 'invalidReasons'>> & {
    /** Trials with a valid reward (those that count). */
    nScored: number;
    /** Trials with rewards and no exception. */
    nClean: number;
  };

export const NO_USAGE: Usage = { costUsd: null, inputTokens: null, outputTokens: null, cacheTokens: null };

/** Adds usages field by field; a field stays null until some usage reports it. */
export function addUsage(a: Usage, b: Usage): Usage {
  const plus = (x: number | null, y: number | null) => (x === null ? y : y === null ? x : x + y);
  return {
    costUsd: plus(a.costUsd, b.costUsd),
    inputTokens: plus(a.inputTokens, b.inputTokens),
    outputTokens: plus(a.outputTokens, b.outputTokens),
    cacheTokens: plus(a.cacheTokens, b.cacheTokens),
  };
}

export function usageOf(t: TrialResult): Usage {
  const r = t.agent_result;
  const n = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    costUsd: n(r?.cost_usd),
    inputTokens: n(r?.n_input_tokens),
    outputTokens: n(r?.n_output_tokens),
    cacheTokens: n(r?.n_cache_tokens),
  };
}

/** `Type: first line of the message` for each distinct exception, for error rows people can act on. */
function exceptionSummaries(ranked: LoadedTrial[]): string[] {
  const out = new Set<string>();
  for (const t of ranked) {
    const e = t.result.exception_info;
    if (!e) continue;
    const first = (e.exception_message ?? '')
      .split('\n')
      .find((l) => l.trim())
      ?.trim();
    out.add(first ? `${e.exception_type}: ${first.slice(0, 300)}` : e.exception_type);
  }
  return [...out].sort();
}

/** Scores one task from its trials. */
export function scoreTask(trials: LoadedTrial[], opts: { rewardKey?: string | null; aggregate?: Aggregation } = {}): TaskScore {
  const ranked = rankTrials(trials);
  const best = ranked[0];
  const scored = ranked.filter((t) => hasValidReward(t.result));
  const invalid = ranked.filter((t) => hasInvalidReward(t.result));
  const exceptions = [...new Set(ranked.map((t) => t.result.exception_info?.exception_type).filter((x): x is string => !!x))].sort();
  const base = {
    trial: best?.result.trial_name ?? null,
    nTrials: ranked.length,
    nScored: scored.length,
    nClean: ranked.filter((t) => isClean(t.result)).length,
    nInvalidTrials: invalid.length,
    invalidReasons: [...new Set(invalid.map((t) => rewardValidity(t.result).why!))].sort(),
    exceptions,
    usage: ranked.map((t) => usageOf(t.result)).reduce(addUsage, NO_USAGE),
    trialRewards: [...scored]
      .sort((a, b) => (a.result.trial_name < b.result.trial_name ? -1 : a.result.trial_name > b.result.trial_name ? 1 : 0))
      .map((t) => extractReward(rewardsOf(t.result)!, opts.rewardKey))
      .filter((r) => Number.isFinite(r)),
  };
  if (!best || scored.length === 0) {
    const why =
      ranked.length === 0
        ? 'no trial result'
        : invalid.length > 0
          ? `no trial has a valid reward: ${invalid.length} of ${ranked.length} trial(s) rewarded but not valid (${exceptionSummaries(invalid).join('; ') || 'Harbor marked them not valid'})${invalid.length < ranked.length ? `; the others unrewarded (${exceptionSummaries(ranked.filter((t) => !invalid.includes(t))).join('; ') || 'no exception recorded'})` : ''}`
          : `no trial has verifier rewards (${exceptionSummaries(ranked).join('; ') || 'no exception recorded'})`;
    return { status: 'error', score: null, metrics: {}, error: why, ...base };
  }
  const nonFinite = (score: number, what: string): TaskScore => ({
    status: 'error',
    score: null,
    metrics: {},
    error: `the ${what} is not a finite number (${score}); rewards: ${JSON.stringify(rewardsOf(best.result))}`,
    ...base,
  });
  if (opts.aggregate === 'mean') {
    const values = scored.map((t) => extractReward(rewardsOf(t.result)!, opts.rewardKey));
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    if (!Number.isFinite(mean)) return nonFinite(mean, 'mean reward over attempts');
    return {
      status: 'scored',
      score: mean,
      metrics: { reward_mean: mean, n_attempts: ranked.length, n_scored: scored.length, n_clean: base.nClean },
      error: null,
      ...base,
    };
  }
  const rewards = rewardsOf(best.result)!;
  const score = extractReward(rewards, opts.rewardKey);
  if (!Number.isFinite(score)) return nonFinite(score, 'reward');
  return { status: 'scored', score, metrics: { ...rewards }, error: null, ...base };
}
