/**
 * The rows the sidecar's W&B run logs (sidecar/wandb-events.ts), under vero's names: the gateway's usage per scope,
 * the budgets left, an invalid evaluation's outcome and the running totals, finalize's summary. The sidecar test
 * (test/sidecar/wandb-run.test.ts) reads such rows back from a real run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { emptyUsage } from '../../model/gateway/policy';
import type { EvalOutcome } from '../../sidecar/engine';
import { budgetRow, evaluationRow, finalizeSummary, type OutcomeTotals, usageRow } from '../../sidecar/wandb-events';
import { WandbReporter, wandbPaths } from '../../sidecar/wandb-reporter';
import { earlyStopSidecar, ES_SPLIT } from '../helpers/early-stop';

test('the gateway’s usage per scope, and the budgets a split has left (none: no series)', () => {
  const row = usageRow({ producer: { ...emptyUsage(), requests: 3, input_tokens: 120, cost_usd: 0.5 }, evaluation: emptyUsage() });
  expect(row).toMatchObject({
    'inference/producer/requests': 3,
    'inference/producer/input_tokens': 120,
    'inference/producer/cost_usd': 0.5,
  });
  expect(row['inference/evaluation/refused_budget']).toBe(0);
  const entry = (runs: number | null, cases: number | null) => ({
    total_run_budget: runs,
    remaining_run_budget: runs,
    total_sample_budget: cases,
    remaining_sample_budget: cases,
    max_samples_per_run: null,
  });
  expect(budgetRow({ train: entry(4, null), validation: entry(null, 30), test: null })).toEqual({
    'budget/train/remaining_runs': 4,
    'budget/validation/remaining_cases': 30,
  });
});

test('an evaluation whose model budget ran out is counted invalid, with why; the totals run per partition and principal', () => {
  const out = (invalid?: string): EvalOutcome => ({
    commit: 'c'.repeat(40),
    split: 'validation',
    samples: [{ id: 0, name: 'a', score: 0, error: null }],
    meanScore: 0,
    nErrors: 0,
    nInfraErrors: 0,
    fullSplit: true,
    health: { n_attempts: 1 } as EvalOutcome['health'],
    ...(invalid ? { invalid } : {}),
    violations: ['valid == 1 (observed 0)'],
  });
  const totals: OutcomeTotals = new Map();
  expect(evaluationRow('e1', out(), 'agent', totals)).toMatchObject({ status: 'success', 'validation/agent/feasible': false });
  const row = evaluationRow('e2', out('the evaluation scope’s budget ran out'), 'agent', totals);
  expect(row).toMatchObject({
    status: 'invalid',
    diagnostics: 'the evaluation scope’s budget ran out',
    violations: 'valid == 1 (observed 0)',
    'validation/agent/evaluations/success_total': 1,
    'validation/agent/evaluations/invalid_total': 1,
  });
});

test('finalize’s summary: shipped, the rewards and baselines, the ranking metric, what the graded candidate broke', () => {
  expect(
    finalizeSummary({
      rewards: { sum_radii: 0 },
      commit: 'abc',
      reason: 'submitted',
      baselines: { sum_radii: { reward: 0.96, source: 'scored' } },
      objective: { metric: 'sum_radii', direction: 'maximize', constraints: ['valid == 1'] },
      violations: { sum_radii: ['valid == 1 (observed 0)'] },
    }),
  ).toEqual({
    shipped: true,
    commit: 'abc',
    reason: 'submitted',
    'reward/sum_radii': 0,
    'baseline/sum_radii': 0.96,
    'objective/metric': 'sum_radii',
    'objective/direction': 'maximize',
    'violations/sum_radii': 'valid == 1 (observed 0)',
  });
  expect(finalizeSummary({ rewards: { reward: 0 }, commit: null, reason: 'no candidate' })).toMatchObject({ shipped: false, commit: '' });
});

test('an early-stopped evaluation is one evaluation row (its outcome over the cases it ran), however many waves it took', async () => {
  const side = earlyStopSidecar({ nCases: 12, minAggregateCases: 2, running: 'stop', sampleBudget: 40, wandb: true });
  try {
    const events = wandbPaths(side.cfg.paths.admin_volume).events;
    fs.mkdirSync(path.dirname(events), { recursive: true });
    const reporter = new WandbReporter({ ...side.cfg, wandb: side.cfg.wandb! }, side.ledger, null, () => undefined);
    side.engine.listeners.push((out, kind) => reporter.evaluated(out, kind)); // as startWandbReporter feeds it
    side.recordIncumbent('incumbent', Array(12).fill(1));
    const ids = Array.from({ length: 12 }, (_, i) => i);
    const { verdict } = await side.evaluate('candidate', ids, 'request-wandb-01', Array(12).fill(0));
    expect(verdict).toMatchObject({ stopped: true });
    expect(verdict!.n_cases_run).toBeGreaterThan(1); // more than one wave (one case each)
    const rows = fs
      .readFileSync(events, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; row?: Record<string, unknown> })
      .filter((e) => e.type === 'log' && e.row?.evaluation_id !== undefined)
      .map((e) => e.row!);
    expect(rows).toEqual([
      expect.objectContaining({
        candidate: 'candidate',
        status: 'success',
        [`${ES_SPLIT}/agent/num_cases`]: verdict!.n_cases_run,
        [`${ES_SPLIT}/agent/score`]: 0,
        [`${ES_SPLIT}/agent/evaluations/success_total`]: 1,
      }),
    ]);
  } finally {
    fs.rmSync(side.dir, { recursive: true, force: true });
  }
});
