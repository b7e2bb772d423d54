/** An early-stopped evaluation's outcome: its waves' outcomes as one, over the cases that ran. */
import { attemptHealth } from '../model/evaluation/attempt-health';
import { emptyUsage, type ScopeUsage } from '../model/gateway/policy';
import { constraintViolations } from '../model/compiled-task/objective';
import type { ServeConfig } from '../model/compiled-task/serve-config';
import { type EvalOutcome, outcomeMetrics, sampleAttempts, trialTotals } from './engine';

const sumUsage = (all: ScopeUsage[]): ScopeUsage =>
  all.reduce((acc, u) => {
    for (const k of Object.keys(acc) as (keyof ScopeUsage)[]) acc[k] += u[k] ?? 0;
    return acc;
  }, emptyUsage());

/** Mode B: errors at or above scoring.error_rate_threshold over every case that ran make it not a score (as one run would). */
function errorRateInvalidity(cfg: ServeConfig, samples: EvalOutcome['samples']): string | undefined {
  const threshold = cfg.scoring.error_rate_threshold;
  const errors = samples.filter((s) => s.score === null).length;
  if (cfg.mode !== 'B' || threshold >= 1 || errors === 0 || errors / samples.length < threshold) return undefined;
  return `${errors} of ${samples.length} task(s) have no rewarded trial, at or above scoring.error_rate_threshold ${threshold}: not a score`;
}

/** The waves as one outcome: their samples in id order, the mean over them, the first invalidity, summed usage. */
export function combineWaves(cfg: ServeConfig, waves: EvalOutcome[], fullSplit: boolean, failureValue: number): EvalOutcome {
  const samples = waves.flatMap((w) => w.samples).sort((a, b) => a.id - b.id);
  const usage = waves.flatMap((w) => (w.modelUsage ? [w.modelUsage] : []));
  const trials = waves.flatMap((w) => (w.trials ? [w.trials] : []));
  const invalid = waves.find((w) => w.invalid && w.invalidBy !== 'error_rate')?.invalid ?? errorRateInvalidity(cfg, samples);
  const metrics = outcomeMetrics(samples, failureValue);
  const violations = constraintViolations(metrics, cfg.objective.constraints ?? []);
  return {
    commit: waves[0]!.commit,
    split: waves[0]!.split,
    samples,
    meanScore: samples.length ? samples.reduce((a, s) => a + (s.score ?? failureValue), 0) / samples.length : failureValue,
    nErrors: waves.reduce((n, w) => n + w.nErrors, 0),
    nInfraErrors: waves.reduce((n, w) => n + w.nInfraErrors, 0),
    fullSplit,
    health: attemptHealth(samples.map((s) => sampleAttempts(s, cfg.mode))),
    metrics,
    ...(trials.length ? { trials: trialTotals(trials) } : {}),
    ...(usage.length ? { modelUsage: sumUsage(usage) } : {}),
    ...(invalid
      ? { invalid, invalidBy: waves.some((w) => w.invalidBy === 'gateway') ? ('gateway' as const) : ('error_rate' as const) }
      : {}),
    ...(violations.length ? { violations } : {}),
  };
}
