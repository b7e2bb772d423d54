/**
 * The build host's sealing secret: 32 random bytes in `$VERO_SEAL_SECRET_FILE`, else `<vero home>/seal-secret`
 * (made once, mode 0600 from the first byte; created exclusively and atomically, so two first builds at once end
 * on one secret and neither reads a partial file). `vero build` derives each task's ledger-seal key from it
 * (compiler/seal-key.ts), so a rebuild of the same build on this host seals with the same key, and nothing the
 * optimizer can reach holds it.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createFileOnce } from './atomic-file';
import { defaultHome } from './eval-config-file';
import { ConfigError } from '../model/errors';

const SEAL_SECRET_ENV = 'VERO_SEAL_SECRET_FILE';

/** The file the host's sealing secret lives in. */
const hostSealSecretFile = (): string => process.env[SEAL_SECRET_ENV] || path.join(defaultHome(), 'seal-secret');

/** The host's sealing secret, made on first use. */
export function hostSealSecret(): Buffer {
  const file = hostSealSecretFile();
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    createFileOnce(file, randomBytes(32).toString('hex'), { mode: 0o600 }); // two first builds at once: one secret
  }
  const hex = fs.readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new ConfigError(`${file}: not a vero sealing secret (64 hex digits); remove it to make a new one`);
  return Buffer.from(hex, 'hex');
}
