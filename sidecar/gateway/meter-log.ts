/**
 * The meter's append-only log: one JSON line per record, each with a sequence number. Appends are batched and
 * written and synced in the thread pool (never on the event loop); each append's promise resolves once its line
 * is on disk. When the log grows past a size, the caller's snapshot (every record so far folded in) is written
 * atomically and the log is emptied; a crash between the two is harmless, since replay skips records the
 * snapshot already holds (by sequence number). A line torn by a crash is the last one, and is ignored.
 */
import * as fs from 'node:fs';
import { promisify } from 'node:util';
import { LedgerCorruptError } from '../../model/errors';

const write = promisify(fs.write);
const fdatasync = promisify(fs.fdatasync);
const ftruncate = promisify(fs.ftruncate);
const close = promisify(fs.close);
// The snapshot is written like infra/atomic-file's (temp, fdatasync, rename), but off the event loop.
// eslint-disable-next-line no-restricted-properties -- the asynchronous form of the atomic writer
const writeFile = promisify(fs.writeFile);
const rename = promisify(fs.rename);
const open = promisify(fs.open);

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

export class MeterLog {
  private pending: string[] = [];
  private waiters: Waiter[] = [];
  private running: Promise<void> | null = null;
  private bytes = 0;

  private constructor(
    private fd: number | null,
    private seq: number,
    private readonly compactAt: number,
    /** The state as JSON with every record up to `seq` folded in (and `seq` recorded in it). */
    private readonly snapshot: (seq: number) => string,
    private readonly snapshotFile: string,
  ) {}

  /** A log that keeps nothing: replaying records into a state. */
  static closed(): MeterLog {
    return new MeterLog(null, 0, Infinity, () => '', '');
  }

  /** The records of a log file (a torn last line is dropped; any other bad line is an error). */
  static read(file: string): { seq: number }[] {
    if (!fs.existsSync(file)) return [];
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const out: { seq: number }[] = [];
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      try {
        out.push(JSON.parse(line) as { seq: number });
      } catch (e) {
        const last = lines.slice(i + 1).every((l) => !l.trim());
        if (!last) throw new LedgerCorruptError(`${file}: line ${i + 1} is not a record (${(e as Error).message})`);
      }
    });
    return out;
  }

  /** Starts an empty log after `seq` (the snapshot on disk holds every record up to it). */
  static start(file: string, seq: number, compactAt: number, snapshot: (seq: number) => string, snapshotFile: string): MeterLog {
    const fd = fs.openSync(file, 'a', 0o600);
    fs.ftruncateSync(fd, 0);
    fs.fsyncSync(fd);
    return new MeterLog(fd, seq, compactAt, snapshot, snapshotFile);
  }

  nextSeq(): number {
    return ++this.seq;
  }

  append(record: unknown): Promise<void> {
    if (this.fd === null) return Promise.resolve();
    this.pending.push(`${JSON.stringify(record)}\n`);
    const done = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    this.running ??= this.drain().finally(() => (this.running = null));
    return done;
  }

  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.fd !== null) await close(this.fd);
    this.fd = null;
  }

  /** Writes what is pending, one batch at a time (a write and a sync each), and compacts when the log is big. */
  private async drain(): Promise<void> {
    while (this.pending.length && this.fd !== null) {
      const batch = Buffer.from(this.pending.splice(0).join(''));
      const waiters = this.waiters.splice(0);
      try {
        await write(this.fd, batch);
        await fdatasync(this.fd);
        this.bytes += batch.length;
        waiters.forEach((w) => w.resolve());
      } catch (e) {
        waiters.forEach((w) => w.reject(e as Error));
      }
      // Nothing pending: every record applied to the state is in the log, so the snapshot holds them all.
      if (this.bytes > this.compactAt && !this.pending.length) await this.compact();
    }
  }

  private async compact(): Promise<void> {
    const tmp = `${this.snapshotFile}.tmp`;
    try {
      await writeFile(tmp, this.snapshot(this.seq), { mode: 0o600 });
      const fd = await open(tmp, 'r');
      await fdatasync(fd);
      await close(fd);
      await rename(tmp, this.snapshotFile);
      await ftruncate(this.fd!, 0);
      this.bytes = 0;
    } catch {
      // The log still holds every record: a failed compaction is retried after the next batch.
    }
  }
}
