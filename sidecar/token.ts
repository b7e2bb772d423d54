/** The admin token: created with mode 0600 from the first byte (no write-then-chmod window), compared in constant time. */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import { writeFileDurable } from '../infra/atomic-file';

export function createAdminToken(file: string): string {
  const token = randomBytes(32).toString('base64url');
  writeFileDurable(file, token, { mode: 0o600 });
  return token;
}

/** Constant-time comparison (digests first, so lengths do not leak either). */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}
