/**
 * What the sidecar's W&B run logs, as rows (vero's names): per evaluation, scoped by partition and principal, its
 * score, case counts and outcome, its report's metrics and the constraints it breaks; the remaining budget of every
 * split; the gateway's usage per scope; and the summary at finalize. Pure: sidecar/wandb-reporter.ts writes them.
 */
import type { BudgetEntry } from './ledger';
import type { EvalOutcome, EvaluationKind } from './engine';
import type { FinalizeResult } from './finalize';
import type { ScopeUsage } from '../model/gateway/policy';

export type WandbRow = Record<string, string | number | boolean>;

/** Running totals per `<partition>/<principal>`: evaluations that scored the candidate, and those that did not. */
export type OutcomeTotals = Map<string, { success: number; invalid: number }>;

/** Whether an evaluation scored the candidate: `success`, or why not (`invalid`: its budget ran out; `failed`). */
export function evaluationStatus(out: EvalOutcome): 'success' | 'invalid' | 'failed' {
  if (out.invalid) return 'invalid';
  return out.samples.length > 0 && out.nInfraErrors === out.samples.length ? 'failed' : 'success';
}

/** One evaluation's row; `totals` is updated with its outcome. */
export function evaluationRow(id: string, out: EvalOutcome, kind: EvaluationKind, totals: OutcomeTotals): WandbRow {
  const scope = `${out.split}/${kind}`;
  const status = evaluationStatus(out);
  const t = totals.get(scope) ?? { success: 0, invalid: 0 };
  if (status === 'success') t.success++;
  else t.invalid++;
  totals.set(scope, t);
  const row: WandbRow = {
    evaluation_id: id,
    candidate: out.commit,
    partition: out.split,
    principal: kind,
    status,
    [`${scope}/score`]: out.meanScore,
    [`${scope}/num_cases`]: out.samples.length,
    [`${scope}/cases/success`]: out.samples.filter((s) => s.score !== null).length,
    [`${scope}/cases/error`]: out.nErrors,
    [`${scope}/cases/infra_error`]: out.nInfraErrors,
    [`${scope}/feasible`]: !out.violations?.length,
    [`${scope}/evaluations/success_total`]: t.success,
    [`${scope}/evaluations/invalid_total`]: t.invalid,
  };
  for (const [k, v] of Object.entries(out.metrics ?? {})) row[`${scope}/metric/${k}`] = v;
  if (out.violations?.length) row.violations = out.violations.join('; ');
  if (out.invalid) row.diagnostics = out.invalid;
  return row;
}

/** The remaining budget of each split that has one: `budget/<split>/remaining_runs` and `…/remaining_cases`. */
export function budgetRow(budgets: Record<string, BudgetEntry | null>): WandbRow {
  const row: WandbRow = {};
  for (const [split, b] of Object.entries(budgets)) {
    if (b?.remaining_run_budget !== null && b?.remaining_run_budget !== undefined)
      row[`budget/${split}/remaining_runs`] = b.remaining_run_budget;
    if (b?.remaining_sample_budget !== null && b?.remaining_sample_budget !== undefined)
      row[`budget/${split}/remaining_cases`] = b.remaining_sample_budget;
  }
  return row;
}

/** The gateway's usage per scope: `inference/<scope>/<counter>`. */
export function usageRow(usage: Record<string, ScopeUsage>): WandbRow {
  const row: WandbRow = {};
  for (const [scope, u] of Object.entries(usage)) for (const [k, v] of Object.entries(u)) row[`inference/${scope}/${k}`] = v;
  return row;
}

/** The run's summary at finalize: the graded commit, why, each reward and baseline, the ranking metric, what broke. */
export function finalizeSummary(r: FinalizeResult): WandbRow {
  const row: WandbRow = { shipped: r.commit !== null, commit: r.commit ?? '', reason: r.reason };
  for (const [k, v] of Object.entries(r.rewards)) row[`reward/${k}`] = v;
  for (const [k, b] of Object.entries(r.baselines ?? {})) if (typeof b.reward === 'number') row[`baseline/${k}`] = b.reward;
  if (r.objective) {
    row['objective/metric'] = r.objective.metric;
    row['objective/direction'] = r.objective.direction;
  }
  for (const [k, v] of Object.entries(r.violations ?? {})) row[`violations/${k}`] = v.join('; ');
  return row;
}
