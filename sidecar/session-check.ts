/**
 * Checks a rescued session dir before anything of it is used: its manifest (task, build digest, schema), every
 * file's presence and SHA-256, no file it does not list, and each state file against the schema the sidecar
 * reads it with. Every problem is reported, all at once. Used on the host (`vero run --resume-from`) and again
 * by the relaunched sidecar.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { formatZodIssues } from '../model/config-issues';
import {
  COMMITS_BUNDLE,
  manifestProblems,
  partOf,
  SESSION_MANIFEST,
  SessionManifest,
  type SessionExpectation,
} from '../model/compiled-task/session-snapshot';
import { CaseScores, EarlyStopRecord } from './early-stop-store';
import { JobRecord } from './eval-jobs';
import { Meter } from './gateway/meter';
import type { ServeConfig } from '../model/compiled-task/serve-config';
import { LedgerFile, ledgerProblems } from './ledger';
import { LEDGER_SEAL, sessionSealProblem } from './ledger-seal';
import { RegistryFileSchema } from './registry';

const Submission = z.looseObject({ commit: z.string() });

/** The most a rescued session may hold: per file, in all, and files (far above what a sidecar writes). */
export const MAX_SESSION_FILE_BYTES = 512 << 20;
export const MAX_SESSION_BYTES = 1024 << 20;
const MAX_SESSION_FILES = 100_000;
const MAX_MANIFEST_BYTES = 64 << 20;

/** Why one more file of `size` bytes takes a session past a bound (counted into `seen`), or null. */
export function sessionBoundProblem(rel: string, size: number, seen: { bytes: number; files: number }): string | null {
  seen.bytes += size;
  seen.files += 1;
  if (size > MAX_SESSION_FILE_BYTES) return `${rel}: ${size} bytes, more than a session file may be (${MAX_SESSION_FILE_BYTES})`;
  if (seen.bytes > MAX_SESSION_BYTES) return `the session's files are more than ${MAX_SESSION_BYTES} bytes in all`;
  if (seen.files > MAX_SESSION_FILES) return `the session has more than ${MAX_SESSION_FILES} files`;
  return null;
}

/**
 * Every file under `dir`, relative and `/`-separated; anything that is neither a file nor a dir is named, and so
 * is a file past a session's bounds (the walk stops there: nothing of it is read).
 */
function walk(dir: string, problems: string[]): string[] | null {
  const out: string[] = [];
  const seen = { bytes: 0, files: 0 };
  let tooLarge: string | null = null;
  const visit = (sub: string) => {
    for (const e of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${e.name}` : e.name;
      if (tooLarge) return;
      if (e.isDirectory()) visit(rel);
      else if (e.isFile()) {
        tooLarge = sessionBoundProblem(rel, fs.statSync(path.join(dir, rel)).size, seen);
        if (tooLarge) problems.push(tooLarge);
        else out.push(rel);
      } else problems.push(`${rel}: not a regular file`);
    }
  };
  visit('');
  return tooLarge ? null : out.sort();
}

/** The first `bytes` of a file, as latin1 (the rest is never read). */
function headOf(file: string, bytes: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, fs.readSync(fd, buf, 0, bytes, 0)).toString('latin1');
  } finally {
    fs.closeSync(fd);
  }
}

const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The ledger against the build's budgets (the build is the authority, never the session's ledger). */
function ledgerBudgetProblem(file: string, budgets: ServeConfig['budgets'] | undefined): string | null {
  if (!budgets) return null;
  const problems = ledgerProblems(LedgerFile.parse(JSON.parse(fs.readFileSync(file, 'utf8'))), budgets);
  return problems.length ? `ledger.json: does not match this build's budgets (${problems.join('; ')})` : null;
}

/** The state file parsed with its reader's schema: null when it is fine, else what is wrong. */
function stateProblem(dir: string, rel: string, want: SessionWant): string | null {
  const file = path.join(dir, rel);
  const parse = (schema: z.ZodType) => {
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      return `${rel}: not JSON (${(e as Error).message.split('\n')[0]})`;
    }
    const r = schema.safeParse(raw);
    return r.success ? null : formatZodIssues(r.error.issues, rel, schema).split('\n')[0]!;
  };
  if (rel === 'ledger.json') return parse(LedgerFile) ?? ledgerBudgetProblem(file, want.budgets);
  if (rel === LEDGER_SEAL) return null; // checked against the whole session (sessionSealProblem)
  if (rel === 'candidates.json') return parse(RegistryFileSchema);
  if (rel === 'submission.json') return parse(Submission);
  if (rel.startsWith('eval-jobs/')) return parse(JobRecord);
  if (rel.startsWith('early-stop/runs/')) return parse(EarlyStopRecord);
  if (rel.startsWith('early-stop/scores/')) return parse(CaseScores);
  if (rel.startsWith('disclosed/') || rel === 'finalize.json') return parse(z.unknown());
  if (rel === 'gateway/meter.json')
    try {
      Meter.load(file);
      return null;
    } catch (e) {
      return `${rel}: ${(e as Error).message.split('\n')[0]}`;
    }
  if (rel === COMMITS_BUNDLE) return /^# v[23] git bundle\n/.test(headOf(file, 20)) ? null : `${rel}: not a git bundle`;
  return null;
}

/** The evaluations the session in `dir` (its manifest's `files`) records: its candidates.json's, if it has one. */
export const sessionRecords = (dir: string, files: Record<string, string>) =>
  files['candidates.json'] ? RegistryFileSchema.parse(JSON.parse(fs.readFileSync(path.join(dir, 'candidates.json'), 'utf8'))).records : [];

/** The commits a bundle holds refs to (its header's `<sha> <ref>` lines). */
function bundleCommits(file: string): Set<string> {
  const head = headOf(file, 1 << 20).split('\n\n')[0] ?? '';
  return new Set([...head.matchAll(/^([0-9a-f]{40}) refs\//gm)].map((m) => m[1]!));
}

/**
 * What a session must match: the task, its build and its budgets, and (`seal_key`, the build's ledger-seal key) the
 * seal its ledger must carry; a build without one (made before ledgers were sealed) checks no seal.
 */
export type SessionWant = SessionExpectation & { base_commit: string; budgets?: ServeConfig['budgets']; seal_key?: Buffer | null };

/**
 * Checks the session in `dir` against this task; `baseCommit`'s evaluations need no commit in the bundle; with
 * `budgets` (the build's), the ledger must agree with them.
 */
export function checkSessionDir(dir: string, want: SessionWant): { manifest: SessionManifest | null; problems: string[] } {
  const problems: string[] = [];
  const manifestFile = path.join(dir, SESSION_MANIFEST);
  if (!fs.existsSync(manifestFile)) return { manifest: null, problems: [`no ${SESSION_MANIFEST}: not a rescued vero session`] };
  if (fs.statSync(manifestFile).size > MAX_MANIFEST_BYTES)
    return { manifest: null, problems: [`${SESSION_MANIFEST}: more than ${MAX_MANIFEST_BYTES} bytes: not a rescued vero session`] };
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch (e) {
    return { manifest: null, problems: [`${SESSION_MANIFEST}: not JSON (${(e as Error).message.split('\n')[0]})`] };
  }
  // A newer schema is said as such, before its fields are judged by this vero's.
  const version = (raw as { schema_version?: unknown } | null)?.schema_version;
  const parsed = SessionManifest.safeParse(raw);
  if (!parsed.success) {
    if (typeof version === 'number' && version > 1)
      return { manifest: null, problems: [`${SESSION_MANIFEST}: schema_version ${version} was written by a newer vero`] };
    return { manifest: null, problems: [formatZodIssues(parsed.error.issues, SESSION_MANIFEST, SessionManifest)] };
  }
  const m = parsed.data;
  problems.push(...manifestProblems(m, want));
  const walked = walk(dir, problems);
  if (!walked) return { manifest: m, problems };
  const present = walked.filter((f) => f !== SESSION_MANIFEST);
  for (const rel of present) if (!(rel in m.files)) problems.push(`${rel}: not listed in ${SESSION_MANIFEST}`);
  for (const [rel, digest] of Object.entries(m.files)) {
    if (!partOf(rel)) continue; // named by manifestProblems
    if (!present.includes(rel)) {
      problems.push(`${rel}: missing`);
      continue;
    }
    if (sha256(path.join(dir, rel)) !== digest) {
      problems.push(`${rel}: its SHA-256 is not the one ${SESSION_MANIFEST} records (the file is corrupt or was edited)`);
      continue;
    }
    const p = stateProblem(dir, rel, want);
    if (p) problems.push(p);
  }
  const unsealed = sessionSealProblem(dir, m.files, want.seal_key, want.task_name);
  if (unsealed) problems.push(unsealed);
  if (problems.length) return { manifest: m, problems };
  // Every evaluated candidate can still be graded: its commit comes with the session.
  const inBundle = m.files[COMMITS_BUNDLE] ? bundleCommits(path.join(dir, COMMITS_BUNDLE)) : new Set<string>();
  const lost = [...new Set(sessionRecords(dir, m.files).map((r) => r.commit))].filter((c) => c !== want.base_commit && !inBundle.has(c));
  if (lost.length) problems.push(`candidates.json: commit(s) ${lost.map((c) => c.slice(0, 12)).join(', ')} are not in ${COMMITS_BUNDLE}`);
  return { manifest: m, problems };
}
