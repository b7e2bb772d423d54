/**
 * Choosing and scoring trials, pure. Ranking is total and independent of directory order (vero.md §6.1 #2):
 * clean (rewards and no exception) > has rewards > later finished_at > content tie-break.
 */
import { parseHarborTime, TrialResult } from './harbor-result';

export interface LoadedTrial {
  result: TrialResult;
  /** The result.json path. */
  file: string;
  /** sha256 of the file's bytes: the last, total tie-break. */
  digest: string;
}

export type Aggregation = 'best' | 'mean';

export function rewardsOf(t: TrialResult): Record<string, number> | null {
  const r = t.verifier_result?.rewards;
  return r && Object.keys(r).length > 0 ? r : null;
}

export function isClean(t: TrialResult): boolean {
  return rewardsOf(t) !== null && !t.exception_info;
}

/** Negative when a ranks above b. */
export function compareTrials(a: LoadedTrial, b: LoadedTrial): number {
  const key = (t: LoadedTrial) =>
    [isClean(t.result) ? 1 : 0, rewardsOf(t.result) ? 1 : 0, parseHarborTime(t.result.finished_at) ?? -Infinity] as const;
  const ka = key(a);
  const kb = key(b);
  for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i]! > kb[i]! ? -1 : 1;
  if (a.result.trial_name !== b.result.trial_name) return a.result.trial_name < b.result.trial_name ? -1 : 1;
  return a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0;
}

export function rankTrials(trials: LoadedTrial[]): LoadedTrial[] {
  return [...trials].sort(compareTrials);
}

/** The primary reward: `rewardKey`, else `pass`, else `reward`, else the mean of all values. */
export function extractReward(rewards: Record<string, number>, rewardKey?: string | null): number {
  for (const k of [rewardKey, 'pass', 'reward']) if (k && rewards[k] !== undefined) return rewards[k];
  const values = Object.values(rewards);
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

export type TaskStatus = 'scored' | 'error';

export interface TaskScore {
  status: TaskStatus;
  /** null when status is error: an error is never a silent 0. */
  score: number | null;
  metrics: Record<string, number>;
  /** The chosen trial (the best-ranked one). */
  trial: string | null;
  nTrials: number;
  nScored: number;
  nClean: number;
  exceptions: string[];
  error: string | null;
}

/** Scores one task from its trials. */
export function scoreTask(trials: LoadedTrial[], opts: { rewardKey?: string | null; aggregate?: Aggregation } = {}): TaskScore {
  const ranked = rankTrials(trials);
  const best = ranked[0];
  const scored = ranked.filter((t) => rewardsOf(t.result));
  const exceptions = [...new Set(ranked.map((t) => t.result.exception_info?.exception_type).filter((x): x is string => !!x))].sort();
  const base = {
    trial: best?.result.trial_name ?? null,
    nTrials: ranked.length,
    nScored: scored.length,
    nClean: ranked.filter((t) => isClean(t.result)).length,
    exceptions,
  };
  if (!best || scored.length === 0) {
    const why = ranked.length === 0 ? 'no trial result' : `no trial has verifier rewards (exceptions: ${exceptions.join(', ') || 'none'})`;
    return { status: 'error', score: null, metrics: {}, error: why, ...base };
  }
  if (opts.aggregate === 'mean') {
    const values = scored.map((t) => extractReward(rewardsOf(t.result)!, opts.rewardKey));
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    return {
      status: 'scored',
      score: mean,
      metrics: { reward_mean: mean, n_attempts: ranked.length, n_scored: scored.length, n_clean: base.nClean },
      error: null,
      ...base,
    };
  }
  const rewards = rewardsOf(best.result)!;
  return { status: 'scored', score: extractReward(rewards, opts.rewardKey), metrics: { ...rewards }, error: null, ...base };
}
