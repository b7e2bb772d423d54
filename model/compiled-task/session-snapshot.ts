/**
 * A rescued session (`vero-session/` in a trial's artifacts): what the eval sidecar had recorded, with a manifest
 * (`session.json`) naming its task, its build's digest and every file's SHA-256. `vero run --resume-from` checks
 * it on the host, and the relaunched sidecar checks it again before it applies it to an empty session dir.
 */
import { z } from 'zod';

/** The schema this vero writes, and the newest it reads. */
export const SESSION_SCHEMA_VERSION = 1;
export const SESSION_MANIFEST = 'session.json';
/** The host path of the checked session a relaunch mounts into the sidecar (read by the task's compose file). */
export const RESUME_SESSION_ENV = 'VERO_RESUME_SESSION';
/** The named volume the sidecar's resume dir is when nothing is resumed (an empty one). */
export const NO_RESUME_VOLUME = 'resume_session';

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex');

export const SessionManifest = z.strictObject({
  tool: z.literal('vero-harbor session'),
  schema_version: z.number().int().min(1),
  task_name: z.string(),
  /** The build's digest (absent when the task was built before builds had one: such a session cannot be resumed). */
  build_digest: Sha256.nullable(),
  taken_at: z.string(),
  /** Every file of the session, by path relative to it (`/`-separated), with its SHA-256. */
  files: z.record(z.string(), Sha256),
});
export type SessionManifest = z.infer<typeof SessionManifest>;

/** Where each file of a session is restored from, and to (the sidecar's admin volume, agent volume or repo). */
export type SessionPart = 'admin' | 'disclosed' | 'commits' | 'record';

/** The session's files by what they are: the sidecar's state, what the optimizer was shown, the candidates' commits. */
export function partOf(rel: string): SessionPart | null {
  if (['ledger.json', 'candidates.json', 'submission.json'].includes(rel)) return 'admin';
  if (/^eval-jobs\/[A-Za-z0-9_-]{8,128}\.json$/.test(rel)) return 'admin';
  if (rel === 'gateway/meter.json' || rel === 'gateway/meter.json.log') return 'admin';
  // Early stop's records (sidecar/early-stop-store.ts): the incumbents' scores and each early stop's verdict.
  if (/^early-stop\/(runs|scores)\/[0-9a-f]{24}\.json$/.test(rel)) return 'admin';
  if (/^disclosed\/[^/]+\/[^/]+\.json$/.test(rel) && !rel.split('/').some((p) => p === '..' || p === '.' || p === '')) return 'disclosed';
  if (rel === COMMITS_BUNDLE) return 'commits';
  // Kept in the snapshot for the record, never restored: a relaunch finalizes again.
  if (rel === 'finalize.json') return 'record';
  // The ledger's seal (sidecar/ledger-seal.ts): checked, never restored.
  if (rel === 'ledger.seal') return 'record';
  return null;
}

/** The candidates' commits (refs/vero/candidates/*) as a git bundle, so a relaunched sidecar can still grade them. */
export const COMMITS_BUNDLE = 'candidates.bundle';
/** The build's digest as a relaunch compares it: what the compiler recorded. */
export type SessionExpectation = Pick<SessionManifest, 'task_name' | 'build_digest'>;

/** What is wrong with a manifest for this task (empty: it may be resumed), besides its files. */
export function manifestProblems(m: SessionManifest, want: SessionExpectation): string[] {
  const out: string[] = [];
  if (m.schema_version > SESSION_SCHEMA_VERSION)
    out.push(
      `session.json: schema_version ${m.schema_version} was written by a newer vero (this one reads up to ${SESSION_SCHEMA_VERSION})`,
    );
  if (m.task_name !== want.task_name) out.push(`session.json: task_name "${m.task_name}" is not this task's ("${want.task_name}")`);
  if (!want.build_digest) out.push('the task has no build digest (built by an older vero): rebuild it with `vero build`');
  else if (m.build_digest !== want.build_digest)
    out.push(
      `session.json: build_digest ${m.build_digest ?? 'null'} is not this task's (${want.build_digest}): the session is of another build (a changed build.yaml, agent repo, dataset or scorer)`,
    );
  if (!('ledger.json' in m.files)) out.push('session.json: the session has no ledger.json');
  for (const rel of Object.keys(m.files)) if (!partOf(rel)) out.push(`session.json: "${rel}" is not a file a session holds`);
  return out;
}
