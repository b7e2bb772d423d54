/** `JobResult.stats` (reference/harbor.md §3.2). */
import { f, PyFloat } from './pyjson';
import { rewardValid, WRITES_REWARD_VALIDITY } from './version';

export interface TrialRecord {
  trialName: string;
  taskKey: string;
  evalKey: string;
  rewards: Record<string, number | PyFloat> | null;
  exceptionType: string | null;
  costUsd: number | null;
}

const num = (v: number | PyFloat): number => (v instanceof PyFloat ? v.value : v);
const keyString = (v: number | PyFloat): string =>
  v instanceof PyFloat ? (Number.isInteger(v.value) ? `${v.value}.0` : String(v.value)) : String(v);

function binom(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

function passAtK(records: TrialRecord[]): Record<string, PyFloat> | undefined {
  const binary = records.every((r) => {
    if (!r.rewards) return true;
    const vals = Object.values(r.rewards);
    return vals.length === 1 && (num(vals[0]!) === 0 || num(vals[0]!) === 1);
  });
  if (!binary || records.length === 0) return undefined;
  const perTask = new Map<string, { n: number; c: number }>();
  for (const r of records) {
    const e = perTask.get(r.taskKey) ?? { n: 0, c: 0 };
    e.n += 1;
    if (r.rewards && num(Object.values(r.rewards)[0]!) === 1) e.c += 1;
    perTask.set(r.taskKey, e);
  }
  const minTrials = Math.min(...[...perTask.values()].map((e) => e.n));
  const ks = new Set<number>();
  for (let k = 2; k <= minTrials; k *= 2) ks.add(k);
  for (let k = 5; k <= minTrials; k += 5) ks.add(k);
  if (ks.size === 0) return undefined;
  const out: Record<string, PyFloat> = {};
  for (const k of [...ks].sort((a, b) => a - b)) {
    let sum = 0;
    for (const { n, c } of perTask.values()) sum += n - c < k ? 1 : 1 - binom(n - c, k) / binom(n, k);
    out[String(k)] = new PyFloat(sum / perTask.size);
  }
  return out;
}

function metrics(all: TrialRecord[]): Record<string, PyFloat>[] {
  // Harbor 0.26 counts only trials whose reward is valid; 0.25 counted every trial (an unrewarded one as 0).
  const records = WRITES_REWARD_VALIDITY ? all.filter((r) => rewardValid(r.rewards !== null, r.exceptionType)) : all;
  const keys = [...new Set(records.flatMap((r) => Object.keys(r.rewards ?? {})))];
  if (records.length === 0) return [{ mean: new PyFloat(0) }];
  const meanOf = (key: string) =>
    records.reduce((s, r) => s + (r.rewards?.[key] !== undefined ? num(r.rewards[key]!) : 0), 0) / records.length;
  if (keys.length <= 1) return [{ mean: new PyFloat(keys.length ? meanOf(keys[0]!) : 0) }];
  return [Object.fromEntries(keys.map((k) => [k, new PyFloat(meanOf(k))]))];
}

export function jobStats(records: TrialRecord[], counters: { running: number; total: number; retries: number }): Record<string, unknown> {
  const groups = new Map<string, TrialRecord[]>();
  for (const r of records) groups.set(r.evalKey, [...(groups.get(r.evalKey) ?? []), r]);
  const evals: Record<string, unknown> = {};
  for (const [key, rs] of [...groups.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const rewardStats: Record<string, Record<string, string[]>> = {};
    const exceptionStats: Record<string, string[]> = {};
    for (const r of rs) {
      for (const [k, v] of Object.entries(r.rewards ?? {})) ((rewardStats[k] ??= {})[keyString(v)] ??= []).push(r.trialName);
      if (r.exceptionType) (exceptionStats[r.exceptionType] ??= []).push(r.trialName);
    }
    const entry: Record<string, unknown> = {
      n_trials: rs.filter((r) => r.rewards && Object.keys(r.rewards).length > 0).length,
      n_errors: rs.filter((r) => r.exceptionType).length,
      metrics: metrics(rs),
    };
    const pak = passAtK(rs);
    if (pak) entry.pass_at_k = pak;
    entry.reward_stats = rewardStats;
    entry.exception_stats = exceptionStats;
    evals[key] = entry;
  }
  const completed = records.length;
  const costs = records.map((r) => r.costUsd).filter((c): c is number => c !== null);
  return {
    n_completed_trials: completed,
    n_errored_trials: records.filter((r) => r.exceptionType).length,
    n_running_trials: counters.running,
    n_pending_trials: Math.max(counters.total - completed - counters.running, 0),
    n_cancelled_trials: records.filter((r) => r.exceptionType === 'CancelledError').length,
    n_retries: counters.retries,
    evals,
    n_input_tokens: null,
    n_cache_tokens: null,
    n_output_tokens: null,
    cost_usd: costs.length ? f(costs.reduce((a, b) => a + b, 0)) : null,
  };
}
