/**
 * The one way files are written that others read: a temp file (created with its final mode), fsync, rename over
 * the target, fsync the directory. A reader never sees half a file; a crash leaves the old file or the new one.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface DurableWriteOptions {
  /** The file's mode from its first byte (default 0o644; secrets and admin state use 0o600). */
  mode?: number;
  /**
   * false: atomic (temp + rename) but not flushed, for many files that a later durable write commits (finalize's
   * per-sample files before the result file): thousands of fsyncs would hold the worker's event loop.
   */
  fsync?: boolean;
}

export function writeFileDurable(file: string, data: string | Uint8Array, opts: DurableWriteOptions = {}): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  const fd = fs.openSync(tmp, 'wx', opts.mode ?? 0o644);
  try {
    fs.writeFileSync(fd, data); // all of it (writeSync may write part)
    if (opts.fsync !== false) fs.fsyncSync(fd);
  } catch (e) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
  if (opts.fsync === false) return;
  const dir = fs.openSync(path.dirname(file), 'r');
  try {
    fs.fsyncSync(dir);
  } finally {
    fs.closeSync(dir);
  }
}

/**
 * Creates `file` with `data` unless it exists (true: this call made it). Exclusive and atomic: the data goes to a
 * temp file first, then is hard-linked into place, which fails if the file exists, so of two creators at once only
 * one wins, and a reader never sees a partial file.
 */
export function createFileOnce(file: string, data: string | Uint8Array, opts: { mode?: number } = {}): boolean {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  writeFileDurable(tmp, data, opts);
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** JSON, indented (`compact` for large machine-only files), with a final newline. */
export function writeJsonDurable(file: string, value: unknown, opts: DurableWriteOptions & { compact?: boolean } = {}): void {
  writeFileDurable(file, `${JSON.stringify(value, null, opts.compact ? undefined : 2)}\n`, opts);
}

/** Serializes async critical sections (check-and-reserve, registry updates) inside one process. */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
