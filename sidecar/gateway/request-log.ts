/**
 * The gateway's request log, for the trusted side only (it lives on the admin volume, which `main` never
 * mounts): one JSON line per request, bodies truncated, the file rotated at a size with a fixed number kept.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Attribution } from './attribution';

export interface RequestLogEntry extends Attribution {
  at: string;
  scope: string;
  token: string;
  endpoint: string;
  model: string | null;
  status: number;
  ms: number;
  usage?: unknown;
  refused?: string;
  request?: string;
  response?: string;
}

export class RequestLog {
  /** The current file's size, kept here (no stat per request). */
  private size: number;

  constructor(
    private readonly file: string,
    private readonly limits: { max_body_bytes: number; max_file_bytes: number; keep: number },
  ) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.size = fs.existsSync(file) ? fs.statSync(file).size : 0;
  }

  /** A body as logged: at most max_body_bytes of it, and how much was left out. */
  clip(body: string | Buffer | undefined): string | undefined {
    if (body === undefined) return undefined;
    const buf = Buffer.isBuffer(body) ? body : Buffer.from(body);
    if (buf.length <= this.limits.max_body_bytes) return buf.toString('utf8');
    return `${buf.subarray(0, this.limits.max_body_bytes).toString('utf8')}… (${buf.length - this.limits.max_body_bytes} more bytes)`;
  }

  write(entry: RequestLogEntry): void {
    const line = `${JSON.stringify(entry)}\n`;
    try {
      const bytes = Buffer.byteLength(line);
      if (this.size > 0 && this.size + bytes > this.limits.max_file_bytes) {
        this.rotate();
        this.size = 0;
      }
      fs.appendFileSync(this.file, line, { mode: 0o600 });
      this.size += bytes;
    } catch {
      // The log is a convenience: a full disk must not fail a model call (the meter is the durable record).
    }
  }

  /** requests.jsonl → .1 → .2 …; the oldest beyond `keep` files is dropped. */
  private rotate(): void {
    const name = (i: number) => (i === 0 ? this.file : `${this.file}.${i}`);
    fs.rmSync(name(this.limits.keep - 1), { force: true });
    for (let i = this.limits.keep - 2; i >= 0; i--) if (fs.existsSync(name(i))) fs.renameSync(name(i), name(i + 1));
  }
}
