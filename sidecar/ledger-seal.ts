/**
 * The session's seal. A rescued session travels outside the trusted side (a trial's artifacts, a tar archive):
 * `vero snapshot` seals it with an HMAC-SHA256 under the build's ledger-seal key (held by the sidecar and the task
 * dir on the host, never by the optimizer), in `ledger.seal`. The HMAC covers the task's name and the manifest's
 * `files` map, sorted (every file of the session by its SHA-256, the seal itself aside), so a resume, which checks
 * each file against its manifest digest, refuses a session whose seal is missing or does not match: any edit of any
 * file (ledger, evaluation jobs, candidates, meter, …), an added or removed file, its figures consistent or not and
 * its digest recomputed or not.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileDurable } from '../infra/atomic-file';
import { ConfigError } from '../model/errors';

export const LEDGER_SEAL = 'ledger.seal';

/** The build's ledger-seal key from its file (null: the task was built before ledgers were sealed). */
export function readSealKey(file: string | undefined): Buffer | null {
  if (!file || !fs.existsSync(file)) return null;
  const hex = fs.readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new ConfigError(`${file}: not a ledger-seal key (64 hex digits)`);
  return Buffer.from(hex, 'hex');
}

/** The seal of a session's files (path → SHA-256; the seal's own entry is not part of it), bound to the task. */
function sessionSeal(key: Buffer, taskName: string, files: Record<string, string>): string {
  const mac = createHmac('sha256', key).update(`vero-harbor session seal v2\0${taskName}\0`);
  for (const rel of Object.keys(files).sort()) if (rel !== LEDGER_SEAL) mac.update(`${rel}\0${files[rel]}\n`);
  return mac.digest('hex');
}

/** Seals the session whose files are `files` into `dir`'s ledger.seal; returns the seal file's text (null: no key). */
export function sealSessionIn(dir: string, key: Buffer | null, taskName: string, files: Record<string, string>): string | null {
  if (!key) return null;
  const text = `${sessionSeal(key, taskName, files)}\n`;
  writeFileDurable(path.join(dir, LEDGER_SEAL), text, { mode: 0o600, fsync: false });
  return text;
}

/** Why the session in `dir`, whose manifest lists `files`, is not the one its seal vouches for (null: it is, or no key). */
export function sessionSealProblem(
  dir: string,
  files: Record<string, string>,
  key: Buffer | null | undefined,
  taskName: string,
): string | null {
  if (!key) return null;
  const sealFile = path.join(dir, LEDGER_SEAL);
  if (!fs.existsSync(sealFile)) return `${LEDGER_SEAL}: the session is not sealed: a session of this build carries its seal`;
  const given = Buffer.from(fs.readFileSync(sealFile, 'utf8').trim().slice(0, 64).padEnd(64, '0'), 'latin1');
  const want = Buffer.from(sessionSeal(key, taskName, files), 'latin1');
  return timingSafeEqual(given, want)
    ? null
    : `${LEDGER_SEAL}: the session's seal does not match (a file of the session was edited, added or removed after the sidecar sealed it, or it was sealed by another build or host)`;
}
