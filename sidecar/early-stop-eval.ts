/**
 * The optimizer's evaluation as `POST /eval` runs it: as today when `eval_early_stop` is off; with it, through
 * sidecar/early-stop-run.ts (waves, the incumbent, the refund), its per-case scores kept for later candidates, and
 * what the optimizer may see of the verdict cut to its split's tier.
 */
import { randomUUID } from 'node:crypto';
import type { SplitAccess } from '../model/compiled-task/serve-config';
import { conflict } from './errors';
import type { BudgetEntry, Ledger } from './ledger';
import type { EvalOutcome } from './engine';
import { combineWaves } from './early-stop-outcome';
import { caseScore, runWithEarlyStop } from './early-stop-run';
import { EarlyStopStore, type StopVerdict } from './early-stop-store';
import type { AdmittedEval } from './eval-jobs';
import type { SidecarDeps } from './sidecar-deps';

export interface AdmittedOutcome {
  out: EvalOutcome;
  /** The full verdict (trusted: the registry, finalize's record); absent when early stop is off. */
  verdict?: StopVerdict;
  /** The budget after a refund (absent: no refund). */
  budgetAfter?: BudgetEntry;
}

/** Runs an admitted evaluation, with early stop when the build turned it on. */
export async function evaluateAdmitted(d: SidecarDeps, a: AdmittedEval): Promise<AdmittedOutcome> {
  const { cfg, engine, ledger } = d;
  const rule = cfg.eval_early_stop;
  if (!rule) return { out: await engine.evaluate(a.commit, a.split, a.ids) };
  const store = new EarlyStopStore(cfg.paths.admin_volume);
  const failureValue = cfg.objective.failure_value ?? 0;
  const spec = cfg.splits.find((s) => s.split === a.split);
  const key = a.request_id || randomUUID();
  refuseRefundWithoutRecord(ledger, store, key);
  let budgetAfter: BudgetEntry | undefined;
  const { waves, verdict } = await runWithEarlyStop(
    {
      key,
      commit: a.commit,
      split: a.split,
      ids: a.ids,
      rule,
      minCases: spec?.access === 'non_viewable' ? spec.min_aggregate_cases : 1,
      waveSize: rule.running === 'stop' ? 1 : cfg.max_concurrency,
      direction: cfg.objective.direction,
      failureValue,
      mode: cfg.mode,
    },
    {
      store,
      evaluateWave: (ids) => engine.evaluate(a.commit, a.split, ids, 'agent', { wave: true }),
      refund: async (n, why) => void (budgetAfter = await ledger.refund(key, a.split, n, why)),
    },
  );
  const out = waves.length === 1 && !verdict.stopped ? waves[0]! : combineWaves(cfg, waves, a.full && !verdict.stopped, failureValue);
  engine.report(out, 'agent'); // one evaluation, however many waves it took
  if (!verdict.stopped && !out.invalid && !out.violations)
    store.recordScores(a.commit, a.split, Object.fromEntries(out.samples.map((s) => [String(s.id), caseScore(s, cfg.mode, failureValue)])));
  return { out, verdict, ...(budgetAfter ? { budgetAfter } : {}) };
}

/**
 * An evaluation the ledger refunded whose early-stop record is gone (a session restored without it, an admin file
 * lost) would find no incumbent and run every case at the refunded price: refused by name instead.
 */
function refuseRefundWithoutRecord(ledger: Ledger, store: EarlyStopStore, key: string): void {
  const refund = ledger.refundOf(key);
  if (refund && !store.load(key))
    throw conflict(
      `request_id "${key}": this evaluation was early-stopped and ${refund.n} unrun case(s) of split "${refund.split}" were refunded, but its early-stop record is missing: it is not run again at the refunded price (send a new request_id to evaluate again)`,
    );
}

/**
 * What the optimizer is told of a verdict: on a viewable split all of it; on an aggregate-only split only the
 * verdict and counts (its mean is the evaluation's aggregate, over at least min_aggregate_cases cases), never
 * where in the order it was decided nor the paired difference, which would tell of single cases.
 */
export function verdictForTier(v: StopVerdict, access: SplitAccess): Record<string, unknown> {
  if (access === 'viewable') return v;
  const { stopped, n_cases_asked, n_cases_run, n_cases_refunded, incumbent, confidence, margin } = v;
  const why = !stopped
    ? `ran every case (${n_cases_run})`
    : v.stopped_at === null
      ? v.why
      : `stopped after ${n_cases_run} of ${n_cases_asked} case(s): it cannot beat the incumbent by ${margin} at ${confidence} confidence; ${n_cases_refunded} unrun case(s) refunded`;
  return { stopped, n_cases_asked, n_cases_run, n_cases_refunded, incumbent, confidence, margin, why };
}
