/**
 * An optimizer's evaluation with early stop as the sidecar runs it (sidecar/early-stop-eval.ts), on the real
 * engine, ledger, early-stop records and listeners, with each wave's cases answered from given scores instead of
 * a harbor run: what is charged, refunded, recorded and told is the product's own.
 */
import * as path from 'node:path';
import { attemptHealth } from '../../model/evaluation/attempt-health';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import type { EvalOutcome } from '../../sidecar/engine';
import { Engine } from '../../sidecar/engine';
import { evaluateAdmitted } from '../../sidecar/early-stop-eval';
import { EarlyStopStore } from '../../sidecar/early-stop-store';
import { Ledger } from '../../sidecar/ledger';
import type { CandidateRegistry } from '../../sidecar/registry';
import { tempDir } from './fixtures';

export const ES_SPLIT = 'validation';

/** How a wave comes back: scored, or not a score of the candidate (the gateway refused a call; its error rate). */
export type WaveKind = 'valid' | 'gateway' | 'error_rate';

export interface EarlyStopSidecarOpts {
  nCases: number;
  minAggregateCases: number;
  running: 'stop' | 'finish';
  maxConcurrency?: number;
  sampleBudget: number;
  wandb?: boolean;
}

/** A Mode B sidecar's config with one aggregate-only split of `nCases` tasks and early stop on. */
export function earlyStopConfig(dir: string, o: EarlyStopSidecarOpts): ServeConfig {
  const tasks = Array.from({ length: o.nCases }, (_, i) => `task-${i}`);
  return ServeConfig.parse({
    schema_version: 1,
    task_name: 't',
    mode: 'B',
    repo_path: '/repo',
    agent_repo_path: '/agent',
    base_commit: 'b'.repeat(40),
    splits: [{ split: ES_SPLIT, access: 'non_viewable', min_aggregate_cases: o.minAggregateCases }],
    budgets: [{ split: ES_SPLIT, total_run_budget: 50, total_sample_budget: o.sampleBudget }],
    reward_mode: 'auto_best',
    selection_split: ES_SPLIT,
    auto_best_k: 1,
    baseline_floor: false,
    targets: [{ split: ES_SPLIT }],
    submit_enabled: false,
    secrets: [],
    harness_user: 'harness',
    timeout_sec: 900,
    max_concurrency: o.maxConcurrency ?? 4,
    paths: { home: dir, agent_volume: path.join(dir, 'agent'), admin_volume: path.join(dir, 'admin'), token_path: path.join(dir, 't') },
    mode_b: { harbor: { agent: 'agent:SkillAgent' }, task_source: { path: '/tasks' }, partition: { [ES_SPLIT]: tasks } },
    eval_early_stop: { confidence: 0.8, margin: 0, running: o.running },
    ...(o.wandb ? { wandb: { project: 'p', mode: 'offline' } } : {}),
    host: '127.0.0.1',
    port: 0,
  });
}

/** A wave's outcome: the cases' scores (null: an error row), and its invalidity by kind. */
function waveOutcome(commit: string, ids: number[], scores: (number | null)[], kind: WaveKind): EvalOutcome {
  const samples = ids.map((id) => ({
    id,
    name: `task-${id}`,
    score: scores[id]!,
    error: scores[id] === null ? 'no rewarded trial' : null,
  }));
  return {
    commit,
    split: ES_SPLIT,
    samples,
    meanScore: samples.reduce((a, s) => a + (s.score ?? 0), 0) / samples.length,
    nErrors: samples.filter((s) => s.score === null).length,
    nInfraErrors: 0,
    fullSplit: false,
    health: attemptHealth([]),
    ...(kind === 'gateway' ? { invalid: 'the gateway refused 1 model call(s) of this evaluation', invalidBy: 'gateway' as const } : {}),
    ...(kind === 'error_rate' ? { invalid: '1 of 1 task(s) have no rewarded trial', invalidBy: 'error_rate' as const } : {}),
  };
}

/**
 * The sidecar's pieces in `dir` (made when absent): its engine answers wave k of each evaluation from `scores`
 * with `kinds[k % kinds.length]`, and counts the cases it was asked for in `dispatched`.
 */
export function earlyStopSidecar(o: EarlyStopSidecarOpts, dir = tempDir('vero-early-stop-sidecar-')) {
  const cfg = earlyStopConfig(dir, o);
  const engine = new Engine(cfg, null);
  const ledger = Ledger.open(path.join(dir, 'admin', 'ledger.json'), cfg.budgets);
  const state = { scores: [] as (number | null)[], kinds: ['valid'] as WaveKind[], waves: 0, dispatched: 0 };
  const answer = async (commit: string, split: string, ids: number[]) => {
    state.dispatched += ids.length;
    return waveOutcome(commit, ids, state.scores, state.kinds[state.waves++ % state.kinds.length]!);
  };
  (engine as unknown as { evaluateCases: typeof answer }).evaluateCases = answer;
  /** Reserves the cases (as POST /eval admits them) and runs the evaluation of `commit`. */
  const evaluate = async (commit: string, ids: number[], requestId: string, scores: (number | null)[], kinds: WaveKind[] = ['valid']) => {
    Object.assign(state, { scores, kinds, waves: 0, dispatched: 0 });
    await ledger.reserve(ES_SPLIT, ids.length, commit, { id: requestId, samples: ids.join(',') });
    const deps = { cfg, engine, ledger, registry: null as unknown as CandidateRegistry, token: '', log: () => undefined };
    const admitted = {
      request_id: requestId,
      split: ES_SPLIT,
      commit,
      ids,
      full: ids.length === o.nCases,
      access: 'non_viewable' as const,
      budget_remaining: null,
    };
    return { ...(await evaluateAdmitted(deps, admitted)), dispatched: state.dispatched };
  };
  /** Records a full evaluation's per-case scores, as an incumbent's. */
  const recordIncumbent = (commit: string, scores: (number | null)[]) =>
    new EarlyStopStore(cfg.paths.admin_volume).recordScores(commit, ES_SPLIT, Object.fromEntries(scores.map((s, i) => [String(i), s])));
  return { dir, cfg, engine, ledger, evaluate, recordIncumbent };
}
