/**
 * Read-only SQL over rows this process built, on SQLite compiled to WebAssembly (sql.js): an in-memory database
 * on a worker thread, made for one query and thrown away. Read-only is SQLite's: `PRAGMA query_only` makes the
 * engine refuse every write, SQLite's own parser must find exactly one statement, and the database lives in the
 * thread's memory (Emscripten's in-memory file system: ATTACH cannot reach a file of this host). The time limit
 * ends the thread (a runaway query cannot hold the process); the row limit stops stepping the statement.
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ConfigError } from '../model/errors';
import type { SqlType } from '../model/query-views';
import { PROJECT_ROOT } from './package-root';

export type SqlValue = string | number | null;

interface SqlTable {
  name: string;
  columns: { name: string; type: SqlType }[];
  rows: SqlValue[][];
}

/** The memory a query may use: SQLite's heap (the tables, sorting, grouping), and the rows of its answer. */
interface SqlMemoryLimits {
  sqliteHeapBytes: number;
  answerBytes: number;
}

export const SQL_MEMORY_LIMITS: SqlMemoryLimits = { sqliteHeapBytes: 384 * 2 ** 20, answerBytes: 256 * 2 ** 20 };

export interface SqlQueryJob {
  sql: string;
  tables: SqlTable[];
  maxRows: number;
  /** Default SQL_MEMORY_LIMITS. */
  memory?: SqlMemoryLimits;
}

/** The thread's JavaScript heap: the tables as sent, the answer's rows (with room for the engine itself). */
const threadLimits = (m: SqlMemoryLimits) => ({
  maxOldGenerationSizeMb: Math.ceil((2 * m.answerBytes) / 2 ** 20) + 256,
  maxYoungGenerationSizeMb: 32,
});

export interface SqlAnswer {
  columns: string[];
  rows: SqlValue[][];
  /** More rows matched than maxRows: the rest were not read. */
  truncated: boolean;
}

/** What the thread sends: that the tables are built (the time limit starts), then the answer or SQLite's refusal. */
export type SqlThreadReply = { ready: true } | { ok: SqlAnswer } | { error: string };

/** sql-thread.js, built next to this file (from the TypeScript sources, as the tests run, the built one). */
function threadScript(): string {
  const dir = __filename.endsWith('.ts') ? path.join(PROJECT_ROOT, 'dist', 'infra') : __dirname;
  return path.join(dir, 'sql-thread.js');
}

/** Why the engine's thread died: its memory limit (named), or its own message. */
function engineFailure(e: Error): string {
  return (e as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY'
    ? 'out of memory: the query thread passed its memory limit; select fewer or smaller columns, aggregate, or lower --max-rows'
    : `the SQL engine failed: ${e.message}`;
}

/**
 * Runs one read-only statement over the tables; a ConfigError when SQLite refuses it or it runs past `timeoutMs`
 * (counted from when the tables are built: loading the engine on a busy machine is not the query's time).
 */
export function runReadOnlySql(query: SqlQueryJob, timeoutMs: number): Promise<SqlAnswer> {
  const job: Required<SqlQueryJob> = { ...query, memory: query.memory ?? SQL_MEMORY_LIMITS };
  return new Promise((resolve, reject) => {
    const worker = new Worker(threadScript(), { workerData: job, resourceLimits: threadLimits(job.memory) });
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
    };
    worker.on('message', (reply: SqlThreadReply) => {
      if ('ready' in reply) {
        timer = setTimeout(() => {
          finish(() => reject(new ConfigError(`query: stopped after ${timeoutMs / 1000} s, the time limit (--timeout raises it)`)));
          void worker.terminate();
        }, timeoutMs);
        return;
      }
      finish(() => ('ok' in reply ? resolve(reply.ok) : reject(new ConfigError(`query: ${reply.error}`))));
      void worker.terminate();
    });
    worker.once('error', (e) => finish(() => reject(new ConfigError(`query: ${engineFailure(e)}`))));
    worker.once('exit', (code) => finish(() => reject(new ConfigError(`query: the SQL engine stopped (exit ${code}) without an answer`))));
  });
}
