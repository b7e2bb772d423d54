/**
 * A log file being appended to: appending a line of vero's own to it, and reading its end (one reader for
 * harbor logs and error messages).
 */
import * as fs from 'node:fs';

/** Appends vero's own notes to a log (harbor writes the rest of it). */
export const appendToLog = (file: string, text: string): void => fs.appendFileSync(file, text);

/** A file's size now (0 when it does not exist): the offset to read a later append from. */
export const fileSize = (file: string): number => fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;

/** The bytes appended to a file since `offset` (at most the last `maxBytes`); '' when there are none or no file. */
export function readSince(file: string, offset: number, maxBytes = 64 * 1024): string {
  try {
    const size = fs.statSync(file).size;
    const from = Math.max(offset, size - maxBytes);
    if (size <= from) return '';
    const fd = fs.openSync(file, 'r');
    try {
      const buf = Buffer.alloc(size - from);
      const n = fs.readSync(fd, buf, 0, buf.length, from);
      return buf.subarray(0, n).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** The last `maxBytes` of a file, for error messages. */
export const tail = (file: string, maxBytes = 2000): string => readSince(file, 0, maxBytes);
