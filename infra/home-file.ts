/**
 * A file under a vero home, for `vero view` to show (a harbor log, a trial's result, trajectory or verifier
 * output): read-only, only a regular file whose real path (every symlink resolved, also of the directories on the
 * way) stays inside the home, and at most `maxBytes` of it. Anything else is refused with the reason.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, readFully } from './bounded-read';

export type HomeFile =
  | { ok: true; path: string; size: number; content: Buffer; truncated: boolean }
  | { ok: false; status: 403 | 404; reason: string };

export type OpenedHomeFile = { ok: true; path: string; size: number; fd: number } | { ok: false; status: 403 | 404; reason: string };

/**
 * Opens a file of the home for reading, with readHomeFile's checks; the caller closes `fd`. `allowed`, when
 * given, must accept both the path asked for and the real path (relative to the home): a symlink cannot turn an
 * allowed name into another file.
 */
export function openHomeFile(home: string, relative: string, allowed?: (rel: string) => boolean): OpenedHomeFile {
  const root = fs.realpathSync(home);
  if (relative.includes('\0')) return { ok: false, status: 403, reason: 'a NUL in the path' };
  const wanted = path.resolve(root, relative);
  if (!isInside(wanted, root)) return { ok: false, status: 403, reason: `${relative}: outside the home ${home}` };
  const notServed = { ok: false, status: 403, reason: `${relative}: not a file this viewer links` } as const;
  if (allowed && !allowed(path.relative(root, wanted))) return notServed;
  let real: string;
  try {
    real = fs.realpathSync(wanted);
  } catch {
    return { ok: false, status: 404, reason: `${relative}: no such file` };
  }
  if (!isInside(real, root)) return { ok: false, status: 403, reason: `${relative}: resolves to ${real}, outside the home ${home}` };
  if (allowed && !allowed(path.relative(root, real))) return notServed;
  // The real path has no symlink left: O_NOFOLLOW refuses one swapped in since; O_NONBLOCK never waits on a FIFO.
  const fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  const st = fs.fstatSync(fd);
  if (st.isFile()) return { ok: true, path: real, size: st.size, fd };
  fs.closeSync(fd);
  return { ok: false, status: 403, reason: `${relative}: not a regular file` };
}

/** At most `maxBytes` of a file of the home, with openHomeFile's checks; anything else is refused with the reason. */
export function readHomeFile(home: string, relative: string, maxBytes: number, allowed?: (rel: string) => boolean): HomeFile {
  const opened = openHomeFile(home, relative, allowed);
  if (!opened.ok) return opened;
  try {
    const content = Buffer.alloc(Math.min(opened.size, maxBytes));
    const n = readFully(opened.fd, content, content.length);
    return { ok: true, path: opened.path, size: opened.size, content: content.subarray(0, n), truncated: opened.size > maxBytes };
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** The path of `file` relative to the home, for a link (null when it is not inside it). */
export function homeRelative(home: string, file: string): string | null {
  const root = fs.realpathSync(home);
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    return null;
  }
  return isInside(real, root) ? path.relative(root, real) : null;
}
