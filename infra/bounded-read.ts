/**
 * Reading files that someone else wrote (Harbor's results, user configs) without being stalled or flooded:
 * only regular files, opened non-blocking (a FIFO never blocks the reader), at most `maxBytes`, and — when
 * `within` is given — only when the real path (symlinks resolved) stays inside that directory.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UnreadableFileError } from '../model/errors';

const KIND: [keyof fs.Stats, string][] = [
  ['isFIFO', 'a FIFO'],
  ['isCharacterDevice', 'a character device'],
  ['isBlockDevice', 'a block device'],
  ['isSocket', 'a socket'],
  ['isDirectory', 'a directory'],
];

function kindOf(st: fs.Stats): string {
  for (const [test, name] of KIND) if ((st[test] as () => boolean).call(st)) return name;
  return 'not a regular file';
}

export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Reads `length` bytes of `fd` from `position` into the start of `buf`, or up to the file's end: how many it read. */
export function readFully(fd: number, buf: Buffer, length: number, position = 0): number {
  let n = 0;
  while (n < length) {
    const r = fs.readSync(fd, buf, n, length - n, position + n);
    if (r === 0) break;
    n += r;
  }
  return n;
}

/** One buffer reused by every read (files are decoded before the next read): no garbage per file. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/** The file's text (UTF-8), read as the module docstring says. */
export function readRegularText(file: string, opts: { maxBytes: number; within?: string }): string {
  const flags = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK;
  let fd: number;
  try {
    // The common case in one syscall: a regular file that is no symlink (no realpath walk per file).
    fd = fs.openSync(file, flags | fs.constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ELOOP') throw e; // ENOENT etc. propagate with their code
    const real = fs.realpathSync(file);
    if (opts.within && !isInside(real, fs.realpathSync(opts.within))) {
      throw new UnreadableFileError(`${file}: resolves to ${real}, outside ${opts.within}`);
    }
    fd = fs.openSync(real, flags);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new UnreadableFileError(`${file}: ${kindOf(st)}, not a regular file`);
    if (st.size > opts.maxBytes) throw new UnreadableFileError(`${file}: ${st.size} bytes, over the ${opts.maxBytes}-byte limit`);
    if (scratch.length < st.size) scratch = Buffer.allocUnsafe(Math.max(st.size, scratch.length * 2));
    return scratch.toString('utf8', 0, readFully(fd, scratch, st.size));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The last `maxBytes` bytes of a regular file that is no symlink (opened non-blocking), and whether that is all of
 * it; null when there is no such file.
 */
export function readRegularTail(file: string, maxBytes: number): { bytes: Buffer; whole: boolean } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return null;
    const n = Math.min(st.size, maxBytes);
    const bytes = Buffer.alloc(n);
    return { bytes: bytes.subarray(0, readFully(fd, bytes, n, st.size - n)), whole: n === st.size };
  } finally {
    fs.closeSync(fd);
  }
}

/** Limits: a trial result is a few KB (64 MiB leaves room for huge rollouts); a config is hand-written. */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024;
export const MAX_CONFIG_BYTES = 1024 * 1024;
