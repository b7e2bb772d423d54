/**
 * What `vero view --session DIR` reads of a compiled task's sidecar session (a rescued `vero-session/`, the trial dir
 * holding it, or a live admin volume): the candidates registry (every optimizer evaluation, with its early-stop
 * verdict) and early stop's records, each replayed through model/early-stop.ts's test to draw its sequence — the
 * upper end of mean(candidate − incumbent) over the cases paired, where it stopped and why. Read-only: regular
 * files only (no symlink followed), each at most MAX_SESSION_FILE_BYTES; an unreadable file is named, not fatal.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { trialFiles } from '../model/harbor/paths';
import { EarlyStop } from '../model/early-stop';
import type { Direction } from '../model/objective';
import type { EvalOutcome } from '../sidecar/engine';
import { earlyStopRunsDir } from '../sidecar/early-stop-files';
import { caseScore } from '../sidecar/early-stop-run';
import { EarlyStopRecord, type StopVerdict } from '../sidecar/early-stop-store';
import { type EvalRecord, RegistryFileSchema } from '../sidecar/registry';

/** The most of one session file the viewer reads (a session's own bound is larger: such a file is named, not drawn). */
export const MAX_SESSION_FILE_BYTES = 64 * 1024 * 1024;

/** One point of an evaluation's sequence: after `t` paired cases, the mean difference and the sequence's upper end. */
export interface StopPoint {
  t: number;
  meanDiff: number;
  upper: number;
}

export interface EarlyStopView {
  commit: string;
  split: string;
  incumbent: string | null;
  nAsked: number;
  /** Cases dispatched in the waves that ran. */
  nRun: number;
  verdict: StopVerdict | null;
  /** The sequence replayed from the record's waves and incumbent (empty: no incumbent, nothing paired). */
  path: StopPoint[];
  /** Whether the replay ends where the recorded verdict says (else only the verdict is trusted, and the page says so). */
  matchesVerdict: boolean;
}

export interface SessionView {
  dir: string;
  evaluations: EvalRecord[];
  stops: EarlyStopView[];
  /** Files that could not be read, each with why. */
  problems: string[];
}

/** The session dir in what was given: the dir itself, its `vero-session/`, or a trial's `artifacts/vero-session/`. */
export function sessionDirOf(given: string): string {
  const root = path.resolve(given);
  for (const d of [root, path.join(root, 'vero-session'), trialFiles(root).session])
    if (fs.existsSync(path.join(d, 'candidates.json')) || fs.existsSync(path.join(d, 'early-stop'))) return d;
  return root;
}

/** A regular file's JSON (no symlink, within the bound); a string saying why not. */
function readJson(file: string): unknown {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!st) return 'absent';
  if (!st.isFile()) return 'not a regular file (links are not followed)';
  if (st.size > MAX_SESSION_FILE_BYTES) return `${st.size} bytes, over the viewer's ${MAX_SESSION_FILE_BYTES}`;
  try {
    return { json: JSON.parse(fs.readFileSync(file, 'utf8')) as unknown };
  } catch (e) {
    return `not JSON (${(e as Error).message.split('\n')[0]})`;
  }
}

/** A parse failure in one line: zod's first issue (its field and what was expected), else the message's first line. */
function firstProblem(e: unknown): string {
  const issue = (e as { issues?: { path: PropertyKey[]; message: string }[] }).issues?.[0];
  const said = issue ? `${issue.path.map(String).join('.') || '(the file)'}: ${issue.message}` : (e as Error).message.split('\n')[0]!;
  return said.slice(0, 200);
}

/** A file's content checked by `parse`, or null with the problem noted. */
function readChecked<T>(file: string, rel: string, parse: (v: unknown) => T, problems: string[]): T | null {
  const got = readJson(file);
  if (typeof got === 'string') {
    if (got !== 'absent') problems.push(`${rel}: ${got}`);
    return null;
  }
  try {
    return parse((got as { json: unknown }).json);
  } catch (e) {
    problems.push(`${rel}: not a record of this sidecar (${firstProblem(e)})`);
    return null;
  }
}

/** A case's score for the test (as sidecar/early-stop-run.ts feeds it): in [0, 1], higher better; null pairs with nothing. */
function testScore(score: number | null, direction: Direction): number | null | 'unbounded' {
  if (score === null) return null;
  if (score < 0 || score > 1) return 'unbounded';
  return direction === 'minimize' ? 1 - score : score;
}

/** The record's sequence, case by case in its order, under one reading of the build (direction, mode). */
function replayPath(rec: EarlyStopRecord, v: StopVerdict, direction: Direction, mode: 'A' | 'B'): StopPoint[] {
  if (!rec.incumbent) return [];
  const n = rec.order.length;
  // No stop inside the replay (minCases past the end): the whole sequence over every paired case is drawn.
  const test = new EarlyStop(n, { confidence: v.confidence, margin: v.margin, minCases: n + 1, target: 'distribution' });
  const byId = new Map(rec.waves.flatMap((w) => w.samples.map((s) => [s.id, s] as const)));
  const out: StopPoint[] = [];
  for (const id of rec.order) {
    const s = byId.get(id);
    if (!s) break;
    const mine = testScore(caseScore(s, mode, 0), direction);
    const theirs = testScore(rec.incumbent.scores[String(id)] ?? null, direction);
    if (mine === 'unbounded' || theirs === 'unbounded') return [];
    if (mine === null || theirs === null) continue;
    test.observe(mine, theirs);
    out.push({ t: test.t, meanDiff: test.verdict.meanDiff, upper: test.verdict.upper });
  }
  return out;
}

const close = (a: number | null, b: number) => a !== null && Math.abs(a - b) < 1e-9;

/** Whether a replayed sequence reaches the verdict's recorded point (its stop, else its last paired case). */
function matches(p: StopPoint[], v: StopVerdict): boolean {
  const at = v.stopped_at !== null ? p[v.stopped_at - 1] : p[p.length - 1];
  if (!at) return v.mean_diff === null;
  return close(v.mean_diff, at.meanDiff) && close(v.upper, at.upper);
}

/** The record as drawn: the replay under the reading of the build that reaches its verdict (the objective's first). */
function stopView(rec: EarlyStopRecord, preferred: Direction): EarlyStopView {
  const v = rec.verdict;
  const base = {
    commit: rec.commit,
    split: rec.split,
    incumbent: rec.incumbent?.commit ?? null,
    nAsked: rec.order.length,
    nRun: rec.wave_ids.reduce((n, w) => n + w.length, 0),
    verdict: v,
  };
  if (!v) return { ...base, path: [], matchesVerdict: false };
  const other: Direction = preferred === 'minimize' ? 'maximize' : 'minimize';
  const readings = [preferred, other].flatMap((d) => (['B', 'A'] as const).map((m) => replayPath(rec, v, d, m)));
  const found = readings.find((p) => matches(p, v));
  return { ...base, path: found ?? readings[0]!, matchesVerdict: found !== undefined };
}

/** The objective's direction finalize recorded (absent before finalize: maximise, the default). */
function directionOf(dir: string, problems: string[]): Direction {
  const f = readChecked(path.join(dir, 'finalize.json'), 'finalize.json', (v) => v as { objective?: { direction?: unknown } }, problems);
  return f?.objective?.direction === 'minimize' ? 'minimize' : 'maximize';
}

/** Early stop's run records, oldest first (by the registry's order of their requests, then by name). */
function stopRecords(dir: string, problems: string[]): EarlyStopRecord[] {
  const runs = earlyStopRunsDir(dir);
  const st = fs.lstatSync(runs, { throwIfNoEntry: false });
  if (!st?.isDirectory()) return [];
  const out: EarlyStopRecord[] = [];
  for (const f of fs
    .readdirSync(runs)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const rel = `early-stop/runs/${f}`;
    const rec = readChecked(path.join(runs, f), rel, (v) => EarlyStopRecord.parse(v) as EarlyStopRecord, problems);
    if (rec) out.push({ ...rec, waves: rec.waves as EvalOutcome[] });
  }
  return out;
}

/** The session at `given` as the viewer draws it (read at each request: a live session's page is current). */
export function readSession(given: string): SessionView {
  const dir = sessionDirOf(given);
  const problems: string[] = [];
  const registry = readChecked(path.join(dir, 'candidates.json'), 'candidates.json', (v) => RegistryFileSchema.parse(v), problems);
  const evaluations = registry?.records ?? [];
  const order = new Map(evaluations.map((r) => [r.request_id, r.seq] as const));
  const seq = (key: string) => order.get(key) ?? Number.MAX_SAFE_INTEGER;
  const recs = stopRecords(dir, problems).sort((a, b) => seq(a.key) - seq(b.key));
  const direction = directionOf(dir, problems);
  const stops = recs.flatMap((r) => {
    try {
      return [stopView(r, direction)];
    } catch (e) {
      problems.push(
        `early stop of ${r.commit.slice(0, 12)} on ${r.split}: its waves cannot be replayed (${(e as Error).message.split('\n')[0]})`,
      );
      return [];
    }
  });
  return { dir, evaluations, stops, problems };
}
