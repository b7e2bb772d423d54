/**
 * An optimizer's evaluation with early stop against the incumbent (build.yaml `eval_early_stop`): the requested
 * cases in a seeded random order, run in waves (each a durable evaluation of its own), each case paired with the
 * incumbent's score on it and fed to model/race/early-stop.ts's anytime-valid test; once the test says the candidate
 * cannot beat the incumbent by the margin, no further wave starts and the cases never run are refunded to the
 * sample budget (a wave that is not a score of the candidate ends it too, once it ran the cases an aggregate-only
 * split's disclosed mean needs). The record is saved after every wave: a restarted sidecar replays it (no wave
 * runs again, the verdict is the recorded one).
 */
import { EarlyStop, earlyStopOrder } from '../model/race/early-stop';
import type { Direction } from '../model/compiled-task/objective';
import type { ServeConfig } from '../model/compiled-task/serve-config';
import { isCandidateFailure, type SampleScore } from '../model/compiled-task/sample-score';
import type { EvalOutcome } from './engine';
import type { CaseScores, EarlyStopRecord, EarlyStopStore, StopVerdict } from './early-stop-store';

export interface EarlyStopRequest {
  /** The evaluation's durable key (its request id): its record, its seed, its refund. */
  key: string;
  commit: string;
  split: string;
  ids: number[];
  rule: NonNullable<ServeConfig['eval_early_stop']>;
  /** No stop before this many cases are paired (an aggregate-only split's min_aggregate_cases). */
  minCases: number;
  /** Cases per wave: `finish` the concurrency (a wave started is paid in full), `stop` one. */
  waveSize: number;
  direction: Direction;
  failureValue: number;
  /** Mode A: a row the candidate failed has no score and counts as the failure value (an error row pairs with nothing). */
  mode: 'A' | 'B';
}

export interface EarlyStopDeps {
  store: EarlyStopStore;
  /** Runs the cases `ids` (sorted) of the request's commit and split: one wave. */
  evaluateWave(ids: number[]): Promise<EvalOutcome>;
  /** Gives `n` unrun cases back to the split's sample budget, once per key. */
  refund(n: number, why: string): Promise<void>;
}

/** A case's score as early stop pairs it: a failed case's failure value (Mode A), null for an error row. */
export const caseScore = (s: SampleScore, mode: 'A' | 'B', failureValue: number): number | null =>
  s.score ?? (mode === 'A' && isCandidateFailure(s.error) ? failureValue : null);

/** A case's score for the test: in [0, 1], higher better; null when it pairs with nothing (an error row). */
export function testScore(score: number | null, direction: Direction): number | null | 'unbounded' {
  if (score === null) return null;
  if (score < 0 || score > 1) return 'unbounded';
  return direction === 'minimize' ? 1 - score : score;
}

/** The test replayed over the waves run so far (deterministic: the same waves, the same state). */
function replay(rec: EarlyStopRecord, req: EarlyStopRequest): { test: EarlyStop; unbounded: boolean } {
  const test = new EarlyStop(req.ids.length, { ...req.rule, minCases: req.minCases, target: 'distribution' });
  const byId = new Map(rec.waves.flatMap((w) => w.samples.map((s) => [s.id, s] as const)));
  for (const id of rec.order) {
    const s = byId.get(id);
    if (!s) break;
    const mine = testScore(caseScore(s, req.mode, req.failureValue), req.direction);
    const theirs = testScore(rec.incumbent!.scores[String(id)] ?? null, req.direction);
    if (mine === 'unbounded' || theirs === 'unbounded') return { test, unbounded: true };
    if (mine !== null && theirs !== null && test.observe(mine, theirs)) break;
  }
  return { test, unbounded: false };
}

/** Cases dispatched in waves that ended (paid, whether or not each came back with a row). */
const casesRun = (rec: EarlyStopRecord) => rec.wave_ids.reduce((n, w) => n + w.length, 0);

/** The verdict once the waves are over: stopped (with where and why), or every case ran (with why not). */
function verdictOf(rec: EarlyStopRecord, req: EarlyStopRequest, test: EarlyStop, note: string | null): StopVerdict {
  const run = casesRun(rec);
  const stopped = run < req.ids.length;
  const refunded = `${req.ids.length - run} unrun case(s) refunded`;
  return {
    stopped,
    stopped_at: test.verdict.stoppedAt,
    n_cases_asked: req.ids.length,
    n_cases_run: run,
    n_cases_refunded: req.ids.length - run,
    incumbent: rec.incumbent?.commit ?? null,
    confidence: req.rule.confidence,
    margin: req.rule.margin,
    mean_diff: test.t > 0 ? test.verdict.meanDiff : null,
    upper: test.t > 0 ? test.verdict.upper : null,
    why:
      note !== null
        ? `${note}${stopped ? `; ${refunded}` : ''}`
        : test.verdict.stoppedAt !== null
          ? `${stopped ? 'stopped' : 'decided (every case had already run)'} ${test.verdict.why} (against ${rec.incumbent!.commit.slice(0, 12)})${stopped ? `; ${refunded}` : ''}`
          : `ran every case: the candidate could still beat the incumbent by ${req.rule.margin} at ${req.rule.confidence}`,
  };
}

/** The fewest cases an evaluation may end with: its aggregate is disclosed (an aggregate-only split's floor). */
const floorOf = (req: EarlyStopRequest) => Math.min(req.minCases, req.ids.length);

/**
 * How many cases the next wave takes: after an invalid wave, only what the aggregate's floor still needs (then it
 * ends); all the rest when the test cannot be used; else a wave.
 */
function nextWaveSize(rec: EarlyStopRecord, req: EarlyStopRequest, invalid: boolean, untestable: boolean): number {
  if (invalid) return floorOf(req) - casesRun(rec);
  return untestable ? req.ids.length : Math.max(1, req.waveSize);
}

/** The next wave: the next `size` cases of the order. */
function nextWave(rec: EarlyStopRecord, size: number): number[] {
  const done = new Set(rec.wave_ids.flat());
  return rec.order
    .filter((id) => !done.has(id))
    .slice(0, size)
    .sort((a, b) => a - b);
}

/** Runs (or resumes) the evaluation's waves until it stops or every case ran; returns its waves and verdict. */
export async function runWithEarlyStop(
  req: EarlyStopRequest,
  deps: EarlyStopDeps,
): Promise<{ waves: EvalOutcome[]; verdict: StopVerdict }> {
  const rec: EarlyStopRecord = deps.store.load(req.key) ?? {
    key: req.key,
    commit: req.commit,
    split: req.split,
    order: earlyStopOrder(req.ids.map(String), req.key).map(Number),
    incumbent: deps.store.incumbent(req.commit, req.split, req.ids, req.direction, req.failureValue),
    waves: [],
    wave_ids: [],
    verdict: null,
  };
  while (!rec.verdict) {
    const { test, unbounded } = rec.incumbent ? replay(rec, req) : { test: null, unbounded: false };
    // Refused model calls end it, once it ran the cases its disclosed aggregate needs (the candidate can cause
    // them itself: never an aggregate over fewer cases, nor a refund of the rest); an error rate is the whole
    // evaluation's (combineWaves), not one wave's.
    const invalid = rec.waves.find((w) => w.invalid && w.invalidBy !== 'error_rate')?.invalid;
    const note = noteOf(rec.incumbent, unbounded, invalid);
    const endsInvalid = invalid !== undefined && casesRun(rec) >= floorOf(req);
    const over = casesRun(rec) >= req.ids.length || (test?.verdict.stoppedAt ?? null) !== null || endsInvalid;
    if (over) {
      rec.verdict = verdictOf(rec, req, test ?? new EarlyStop(req.ids.length, { ...req.rule, minCases: req.minCases }), note);
    } else {
      const ids = nextWave(rec, nextWaveSize(rec, req, invalid !== undefined, note !== null));
      rec.waves.push(await deps.evaluateWave(ids));
      rec.wave_ids.push(ids);
    }
    deps.store.save(rec);
  }
  if (rec.verdict.n_cases_refunded > 0) await deps.refund(rec.verdict.n_cases_refunded, rec.verdict.why);
  return { waves: rec.waves, verdict: rec.verdict };
}

/** Why the test is not used (null: it is). */
function noteOf(incumbent: CaseScores | null, unbounded: boolean, invalid: string | undefined): string | null {
  if (invalid) return `no further wave: a wave is not a score of the candidate (${invalid})`;
  if (!incumbent) return 'ran every case: no incumbent (no other candidate has a full evaluation of these cases yet)';
  if (unbounded) return 'ran every case: a score outside [0, 1], which the test cannot bound';
  return null;
}
