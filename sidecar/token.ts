/** The admin token: created with mode 0600 from the first byte (no write-then-chmod window), compared in constant time. */
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export function createAdminToken(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const token = randomBytes(32).toString('base64url');
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
  try {
    fs.writeSync(fd, token);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  return token;
}

/** Constant-time comparison (digests first, so lengths do not leak either). */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}
