/**
 * A race's payloads (the `raceCandidates` workflow, `vero race`) and its shared task order. Pure: workflow code
 * imports it. The decision rule and its guarantee are in model/race/decision.ts, the statistics in
 * model/race/confidence-sequence.ts.
 */
import { sha256 } from '@noble/hashes/sha2';
import { utf8ToBytes } from '@noble/hashes/utils';
import { z } from 'zod';
import { EvalSettings } from '../evaluation/input';
import type { RaceJson } from '../cli-json';

const RaceCandidate = z.strictObject({
  /** The id of this candidate's part of the race: a partial evaluation `vero results` and `vero compare` read. */
  evalId: z.string().min(1),
  /** The full evaluation of this commit under the same config (whose stored rows a race may reuse). */
  fullEvalId: z.string().min(1),
  candidate: z.string().regex(/^[0-9a-f]{40}$/, 'expected a full 40-hex commit sha'),
  candidateRef: z.string(),
});
type RaceCandidate = z.infer<typeof RaceCandidate>;

/** A task's row already scored for a candidate under the same config digest: reused, never run again. */
const StoredRow = z.object({ task: z.string(), status: z.literal('scored'), score: z.number().nullable() }).passthrough();

export const RaceInput = z.strictObject({
  raceId: z.string().min(1),
  agentRepo: z.string().min(1),
  home: z.string().min(1),
  /** The tasks, in the config's order; the race runs them in the order `seed` shuffles them to. */
  tasks: z.array(z.string().min(1)).min(1),
  seed: z.string(),
  configDigest: z.string(),
  settings: EvalSettings,
  candidates: z.array(RaceCandidate).min(2),
  /** 1 − α, e.g. 0.95. */
  confidence: z.number().gt(0.5).lt(1),
  margin: z.number().min(0).max(1),
  /** Tasks per candidate between decisions; absent: concurrency ÷ live candidates (at least 1). */
  batchSize: z.number().int().min(1).optional(),
  /** What happens to an eliminated candidate's running tasks: stopped (default) or let finish. */
  onEliminated: z.enum(['stop', 'finish']),
  /** Stop starting tasks once the race's new trials reported this much cost. */
  maxCostUsd: z.number().positive().optional(),
  /** Per candidate (same index): rows stored for it under the same config digest. */
  stored: z.array(z.array(StoredRow)),
  /**
   * Each task's relative weight (same index as `tasks`), from earlier evaluations of the tasks under the same config
   * digest (model/race/sampling.ts `taskWeights`): the race draws the tasks with these probabilities and reweights.
   * Absent: today's uniform, seeded order.
   */
  taskWeights: z.array(z.number().positive().finite()).optional(),
  /** How many earlier evaluations the weights came from (the record says so). */
  earlierEvaluations: z.number().int().min(0).optional(),
});
export type RaceInput = z.infer<typeof RaceInput>;

/** A uniform draw in [0, 1) for step i of the shuffle: the first 48 bits of sha256(seed, i) (pure JS: workflows use it). */
export function draw(seed: string, i: number, stream = 'vero-race'): number {
  const h = sha256(utf8ToBytes(`${stream}:${seed}:${i}`));
  return (h[0]! * 2 ** 40 + h[1]! * 2 ** 32 + h[2]! * 2 ** 24 + h[3]! * 2 ** 16 + h[4]! * 2 ** 8 + h[5]!) / 2 ** 48;
}

/** The tasks in the race's order: a Fisher–Yates shuffle from the seed (the same seed, the same order). */
export function raceOrder(tasks: readonly string[], seed: string): string[] {
  const out = [...tasks];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(draw(seed, i) * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A race's result, as `vero race --json` prints it (model/cli-json.ts RaceJson); its state is the same without `results`. */
export type RaceResult = z.infer<typeof RaceJson>;
export type RaceState = Omit<RaceResult, 'results'>;
export type RaceCandidateState = RaceState['candidates'][number];

/** A candidate's state before the race has decided anything. */
export function startingCandidateState(c: Pick<RaceCandidateState, 'candidateRef' | 'candidate' | 'evalId'>): RaceCandidateState {
  const { candidateRef, candidate, evalId } = c;
  const zero = { tasksRun: 0, reused: 0, trialRuns: 0, costUsd: 0, mean: 0 };
  return {
    candidateRef,
    candidate,
    evalId,
    status: 'racing',
    ...zero,
    meanCs: [0, 1],
    vsLeader: null,
    eliminatedAt: null,
    why: null,
    path: [],
  };
}
