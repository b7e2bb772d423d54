/**
 * The name of a task's Harbor job dir (pure, so the workflows can name it too): the same on every attempt, so
 * Harbor resumes the job instead of starting over.
 */
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';

/** A job name that is a valid single path segment and stable for a task name. */
export function jobNameFor(task: string): string {
  const safe =
    task
      .replace(/[^A-Za-z0-9._-]+/g, '__')
      .replace(/^\.+/, '_')
      .slice(0, 120) || 'task';
  // Sanitizing can merge names (`org/x` and `org__x`); a digest of the original keeps them apart. A pure-JS sha256
  // (not node:crypto), so the workflows can name a task's job dir too.
  return safe === task ? safe : `${safe}-${bytesToHex(sha256(utf8ToBytes(task))).slice(0, 8)}`;
}
