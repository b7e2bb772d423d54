/**
 * A task's ledger-seal key, written into the sidecar-only part of the build (`environment/sidecar/`, copied into
 * the sidecar's image, mode 0600): derived from the build host's secret and the build's digest, so it is the same
 * for a rebuild of the same build on the same host, and outside the digest itself.
 */
import { createHmac } from 'node:crypto';
import * as path from 'node:path';
import { writeFileDurable } from '../infra/atomic-file';
import { hostSealSecret } from '../infra/host-seal-secret';
import { BUILD_DIGEST_FILE } from './build-digest';
import { CONTEXT } from './containers';

const LEDGER_SEAL_KEY_FILE = `environment/${CONTEXT.ledgerSealKey}`;

/** Writes the build's digest and its ledger-seal key into the task dir being built (`tmp`). */
export function writeDigestAndSealKey(tmp: string, buildDigest: string): void {
  writeFileDurable(path.join(tmp, BUILD_DIGEST_FILE), `${buildDigest}\n`, { fsync: false });
  const key = createHmac('sha256', hostSealSecret()).update(`vero-harbor ledger seal key\0${buildDigest}`).digest('hex');
  writeFileDurable(path.join(tmp, LEDGER_SEAL_KEY_FILE), `${key}\n`, { mode: 0o600, fsync: false });
}
