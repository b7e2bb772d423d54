/**
 * What early stop keeps on the admin volume (trusted; the optimizer never reads it): each optimizer evaluation's
 * per-case scores (an incumbent's, to pair a later candidate with), and each early-stopping evaluation's record —
 * its order, its incumbent, the waves it ran and its verdict — written after every wave, so a restarted sidecar
 * neither runs a wave again nor decides again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { writeJsonDurable } from '../infra/atomic-file';
import type { Direction } from '../model/compiled-task/objective';
import type { EvalOutcome } from './engine';

/** An evaluation's per-case scores (null: an error row, which pairs with nothing). */
export const CaseScores = z.strictObject({
  commit: z.string(),
  split: z.string(),
  scores: z.record(z.string(), z.number().nullable()),
  at: z.string(),
});
export type CaseScores = z.infer<typeof CaseScores>;

/** Where and why an early-stopping evaluation stopped (or that it ran every case). */
export const StopVerdict = z.strictObject({
  stopped: z.boolean(),
  /** Cases paired when the decision was taken (null: it never stopped). */
  stopped_at: z.number().int().nullable(),
  n_cases_asked: z.number().int(),
  n_cases_run: z.number().int(),
  n_cases_refunded: z.number().int(),
  incumbent: z.string().nullable(),
  confidence: z.number(),
  margin: z.number(),
  /** mean(candidate − incumbent) over the paired cases and the sequence's upper end when it was decided. */
  mean_diff: z.number().nullable(),
  upper: z.number().nullable(),
  why: z.string(),
});
export type StopVerdict = z.infer<typeof StopVerdict>;

export const EarlyStopRecord = z.strictObject({
  key: z.string(),
  commit: z.string(),
  split: z.string(),
  /** The requested sample ids in the seeded order the waves take them. */
  order: z.array(z.number().int()),
  incumbent: CaseScores.nullable(),
  /** Each wave's outcome as the engine answered it (trusted, our own writing), and the cases it was asked for. */
  waves: z.array(z.unknown()),
  wave_ids: z.array(z.array(z.number().int())),
  verdict: StopVerdict.nullable(),
});
export type EarlyStopRecord = Omit<z.infer<typeof EarlyStopRecord>, 'waves'> & { waves: EvalOutcome[] };

const digest = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 24);

export class EarlyStopStore {
  private readonly dir: string;

  constructor(adminVolume: string) {
    this.dir = path.join(adminVolume, 'early-stop');
  }

  private runFile(key: string): string {
    return path.join(this.dir, 'runs', `${digest(key)}.json`);
  }

  load(key: string): EarlyStopRecord | null {
    const file = this.runFile(key);
    if (!fs.existsSync(file)) return null;
    return EarlyStopRecord.parse(JSON.parse(fs.readFileSync(file, 'utf8'))) as EarlyStopRecord;
  }

  save(rec: EarlyStopRecord): void {
    writeJsonDurable(this.runFile(rec.key), rec, { mode: 0o600 });
  }

  /** Records an evaluation's per-case scores (one that ran every case it asked for, valid, within constraints). */
  recordScores(commit: string, split: string, scores: Record<string, number | null>): void {
    const file = path.join(this.dir, 'scores', `${digest([commit, split, Object.keys(scores)])}.json`);
    writeJsonDurable(file, { commit, split, scores, at: new Date().toISOString() } satisfies CaseScores, { mode: 0o600 });
  }

  /**
   * The incumbent for an evaluation of `commit` on `ids` of `split`: of the other commits' recorded evaluations
   * that cover every one of those cases, the best mean over them (the selection rule's direction), the earliest
   * on a tie; null when there is none.
   */
  incumbent(commit: string, split: string, ids: number[], direction: Direction, failureValue: number): CaseScores | null {
    const dir = path.join(this.dir, 'scores');
    if (!fs.existsSync(dir)) return null;
    const all = fs
      .readdirSync(dir)
      .map((f) => CaseScores.parse(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))))
      .filter((c) => c.split === split && c.commit !== commit && ids.every((i) => String(i) in c.scores))
      .sort((a, b) => a.at.localeCompare(b.at));
    const meanOf = (c: CaseScores) => ids.reduce((a, i) => a + (c.scores[String(i)] ?? failureValue), 0) / ids.length;
    let best: { c: CaseScores; mean: number } | null = null;
    for (const c of all) {
      const mean = meanOf(c);
      if (!best || (direction === 'minimize' ? mean < best.mean : mean > best.mean)) best = { c, mean };
    }
    return best?.c ?? null;
  }
}
