/**
 * What `vero view --session DIR` reads of a compiled task's sidecar session (a rescued `vero-session/`, the trial dir
 * holding it, or a live admin volume): the candidates registry (every optimizer evaluation, with its early-stop
 * verdict) and early stop's records, each replayed through model/race/early-stop.ts's test to draw its sequence — the
 * upper end of mean(candidate − incumbent) over the cases paired, where it stopped and why. Read-only: regular
 * files only, opened without following a link, under dirs none of which is a link (the given dir is resolved once,
 * at startup), each at most MAX_SESSION_FILE_BYTES, at most MAX_SESSION_RECORDS run records; an unreadable file is
 * named (never quoted), not fatal.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { trialFiles } from '../model/harbor/paths';
import { EarlyStop } from '../model/race/early-stop';
import type { Direction } from '../model/compiled-task/objective';
import type { EvalOutcome } from '../sidecar/engine';
import { earlyStopRunsDir } from '../sidecar/early-stop-files';
import { caseScore, testScore } from '../sidecar/early-stop-run';
import { EarlyStopRecord, type StopVerdict } from '../sidecar/early-stop-store';
import { type EvalRecord, RegistryFileSchema } from '../sidecar/registry';

/** The most of one session file the viewer reads (a session's own bound is larger: such a file is named, not drawn). */
export const MAX_SESSION_FILE_BYTES = 64 * 1024 * 1024;

/** The most early-stop run records one page reads (the rest are counted, not read). */
export const MAX_SESSION_RECORDS = 100;

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

/** Whether `dir` under `root` is a dir reached through no link (each component from `root` down is checked). */
function isPlainDirUnder(root: string, dir: string): boolean {
  const parts = path.relative(root, dir).split(path.sep).filter(Boolean);
  let at = root;
  for (const part of ['', ...parts]) {
    at = path.join(at, part);
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (!st?.isDirectory()) return false;
  }
  return true;
}

/** The session dir in what was given (resolved): the dir, its `vero-session/`, or a trial's `artifacts/vero-session/`. */
export function sessionDirOf(given: string): string {
  const root = fs.realpathSync(path.resolve(given));
  for (const d of [root, path.join(root, 'vero-session'), trialFiles(root).session]) {
    if (!isPlainDirUnder(root, d)) continue;
    if (['candidates.json', 'early-stop'].some((f) => fs.lstatSync(path.join(d, f), { throwIfNoEntry: false }))) return d;
  }
  return root;
}

/** A regular file's bytes, opened without following a link and checked on the open file (within the bound). */
function readRegularFile(file: string): Buffer | string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'absent' : code === 'ELOOP' ? 'not a regular file (links are not followed)' : `unreadable (${code})`;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return 'not a regular file (links are not followed)';
    if (st.size > MAX_SESSION_FILE_BYTES) return `${st.size} bytes, over the viewer's ${MAX_SESSION_FILE_BYTES}`;
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** A parse failure in one line: zod's first issue (its field and what was expected, never the value found). */
function firstProblem(e: unknown): string {
  const issue = (e as { issues?: { path: PropertyKey[]; code?: string; expected?: unknown }[] }).issues?.[0];
  if (!issue) return 'not the shape expected';
  const what = typeof issue.expected === 'string' ? `expected ${issue.expected}` : (issue.code ?? 'invalid');
  return `${issue.path.map(String).join('.') || '(the file)'}: ${what}`.slice(0, 200);
}

/** A regular file's JSON checked by `parse`, or null with the problem noted (why, never quoting the file). */
function readChecked<T>(file: string, rel: string, parse: (v: unknown) => T, problems: string[]): T | null {
  const bytes = readRegularFile(file);
  const noted = (problem: string): null => {
    problems.push(`${rel}: ${problem}`);
    return null;
  };
  if (typeof bytes === 'string') return bytes === 'absent' ? null : noted(bytes);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    return noted('not valid JSON');
  }
  try {
    return parse(json);
  } catch (e) {
    return noted(`not a record of this sidecar (${firstProblem(e)})`);
  }
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

/** The run records' file names to read (by name, at most MAX_SESSION_RECORDS; the rest counted in `problems`). */
function recordNames(runs: string, problems: string[]): string[] {
  const names = fs
    .readdirSync(runs)
    .filter((n) => n.endsWith('.json'))
    .sort();
  const left = names.length - MAX_SESSION_RECORDS;
  if (left > 0) problems.push(`early-stop/runs: ${left} more record(s) not shown (the viewer reads at most ${MAX_SESSION_RECORDS})`);
  return names.slice(0, MAX_SESSION_RECORDS);
}

/** Early stop's run records, oldest first (by the registry's order of their requests, then by name). */
function stopRecords(dir: string, problems: string[]): EarlyStopRecord[] {
  const runs = earlyStopRunsDir(dir);
  if (!isPlainDirUnder(dir, runs)) {
    if (fs.lstatSync(path.join(dir, 'early-stop'), { throwIfNoEntry: false }))
      problems.push('early-stop/runs: not a dir reached through no link');
    return [];
  }
  const out: EarlyStopRecord[] = [];
  for (const f of recordNames(runs, problems)) {
    const rel = `early-stop/runs/${f}`;
    const rec = readChecked(path.join(runs, f), rel, (v) => EarlyStopRecord.parse(v) as EarlyStopRecord, problems);
    if (rec) out.push({ ...rec, waves: rec.waves as EvalOutcome[] });
  }
  return out;
}

/** The session at `given` as the viewer draws it (read at each request: a live session's page is current). */
export function readSession(given: string): SessionView {
  const problems: string[] = [];
  if (!fs.lstatSync(given, { throwIfNoEntry: false })?.isDirectory())
    return { dir: given, evaluations: [], stops: [], problems: ['the session dir: not a dir (links are not followed)'] };
  const dir = sessionDirOf(given);
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
