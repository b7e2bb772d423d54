/** An early-stopping evaluation's wave as the sidecar's engine answers it, from fixed per-case scores. */
import { attemptHealth } from '../../model/evaluation/attempt-health';
import type { EvalOutcome } from '../../sidecar/engine';

/** The wave's outcome on `split`: the cases `ids` (samples in id order) scored `scores[id]`, no error. */
export function waveOutcome(commit: string, split: string, ids: number[], scores: number[], fullSplit: boolean): EvalOutcome {
  const samples = ids.map((id) => ({ id, name: `case-${id}`, score: scores[id]!, error: null }));
  return {
    commit,
    split,
    samples,
    meanScore: samples.reduce((a, s) => a + s.score, 0) / samples.length,
    nErrors: 0,
    nInfraErrors: 0,
    fullSplit,
    health: attemptHealth([]),
  };
}
