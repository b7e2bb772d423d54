/**
 * The ledger's seal. A rescued session's `ledger.json` travels outside the trusted side (a trial's artifacts, a
 * tar archive): `vero snapshot` seals it with an HMAC-SHA256 under the build's ledger-seal key (held by the
 * sidecar and the task dir on the host, never by the optimizer), in `ledger.seal`, and a resume refuses a ledger
 * whose seal is missing or does not match: any edit, its figures consistent or not.
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

/** The seal of a ledger's exact bytes, bound to the task. */
export function ledgerSeal(key: Buffer, taskName: string, ledger: Buffer): string {
  return createHmac('sha256', key).update(`vero-harbor ledger seal v1\0${taskName}\0`).update(ledger).digest('hex');
}

/** Seals `dir`'s ledger.json into its ledger.seal; returns the seal file's text (null: no key, no ledger). */
export function sealLedgerIn(dir: string, key: Buffer | null, taskName: string): string | null {
  const ledger = path.join(dir, 'ledger.json');
  if (!key || !fs.existsSync(ledger)) return null;
  const text = `${ledgerSeal(key, taskName, fs.readFileSync(ledger))}\n`;
  writeFileDurable(path.join(dir, LEDGER_SEAL), text, { mode: 0o600, fsync: false });
  return text;
}

/** Why `dir`'s ledger.json is not the one its seal vouches for (null: it is, or the build has no key). */
export function ledgerSealProblem(dir: string, key: Buffer | null | undefined, taskName: string): string | null {
  if (!key) return null;
  const sealFile = path.join(dir, LEDGER_SEAL);
  if (!fs.existsSync(sealFile)) return `ledger.json: not sealed (no ${LEDGER_SEAL}): a session of this build carries its ledger's seal`;
  const given = Buffer.from(fs.readFileSync(sealFile, 'utf8').trim().slice(0, 64).padEnd(64, '0'), 'latin1');
  const want = Buffer.from(ledgerSeal(key, taskName, fs.readFileSync(path.join(dir, 'ledger.json'))), 'latin1');
  return timingSafeEqual(given, want)
    ? null
    : `ledger.json: its seal does not match (the ledger was edited after the sidecar sealed it, or sealed by another build or host)`;
}
