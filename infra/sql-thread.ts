/** The SQL engine's worker thread (sql-engine.ts): builds the tables, runs the one statement, sends the answer. */
import { parentPort, workerData } from 'node:worker_threads';
import initSqlJs from 'sql.js';
import { ConfigError } from '../model/errors';
import type { SqlAnswer, SqlQueryJob, SqlThreadReply } from './sql-engine';

const quoteName = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The bytes a value holds in this thread (a string's UTF-16, a blob's bytes). */
const sizeOf = (v: unknown): number => (typeof v === 'string' ? 2 * v.length : v instanceof Uint8Array ? v.byteLength : 8);

/** Steps the statement into rows: at most maxRows, and at most answerBytes of values (else a named refusal). */
function stepRows(
  stmt: { step(): boolean; get(): unknown[] },
  job: Required<SqlQueryJob>,
): { rows: SqlAnswer['rows']; truncated: boolean } {
  const rows: SqlAnswer['rows'] = [];
  let bytes = 0;
  while (stmt.step()) {
    if (rows.length === job.maxRows) return { rows, truncated: true };
    const row = stmt.get() as SqlAnswer['rows'][number];
    bytes += row.reduce<number>((n, v) => n + sizeOf(v), 0);
    if (bytes > job.memory.answerBytes) throw new ConfigError(memoryRefusal(`its answer passed ${job.memory.answerBytes / 2 ** 20} MB`));
    rows.push(row);
  }
  return { rows, truncated: false };
}

const memoryRefusal = (what: string) =>
  `out of memory: ${what}, the memory limit of a query; select fewer or smaller columns, aggregate, or lower --max-rows`;

/** SQLite's own "out of memory" (its heap limit), named as the query's memory limit. */
export function namedSqlError(message: string, heapBytes: number): string {
  return /out of memory/i.test(message) && !message.startsWith('out of memory:')
    ? memoryRefusal(`SQLite needed more than ${heapBytes / 2 ** 20} MB (sorting, grouping or building rows)`)
    : message;
}

async function answer(job: Required<SqlQueryJob>): Promise<SqlAnswer> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  try {
    // SQLite's heap is bounded, and its temporary tables (a big ORDER BY's sorter) live in that heap, not in
    // Emscripten's unbounded in-memory files; neither can be changed by the one statement (a PRAGMA that sets
    // them is a statement of its own, and their table-valued forms take no argument).
    db.run(`PRAGMA hard_heap_limit = ${job.memory.sqliteHeapBytes}`);
    db.run('PRAGMA temp_store = MEMORY');
    db.run('BEGIN');
    for (const t of job.tables) {
      db.run(`CREATE TABLE ${quoteName(t.name)} (${t.columns.map((c) => `${quoteName(c.name)} ${c.type}`).join(', ')})`);
      const insert = db.prepare(`INSERT INTO ${quoteName(t.name)} VALUES (${t.columns.map(() => '?').join(', ')})`);
      for (const row of t.rows) insert.run(row);
      insert.free();
    }
    db.run('COMMIT');
    // From here on SQLite refuses any write (SQLITE_READONLY), whatever the statement says.
    db.run('PRAGMA query_only = ON');
    parentPort!.postMessage({ ready: true } satisfies SqlThreadReply);
    // SQLite's parser finds the statements: exactly one runs.
    const statements = db.iterateStatements(job.sql);
    const first = statements.next();
    if (first.done) throw new ConfigError('no SQL statement given');
    const stmt = first.value;
    // What follows the first statement, prepared by SQLite (only blanks and comments are "nothing to prepare").
    let more = false;
    try {
      db.prepare(statements.getRemainingSQL()).free();
      more = true;
    } catch (e) {
      more = !/nothing to prepare/i.test(String((e as Error)?.message ?? e));
    }
    if (more) throw new ConfigError('one statement at a time (this SQL has more than one)');
    // A statement with no result columns (ATTACH, PRAGMA x = y, BEGIN…) is not a query: it is never stepped.
    if (stmt.getColumnNames().length === 0) throw new ConfigError('not a query: the statement returns no columns (use SELECT)');
    const { rows, truncated } = stepRows(stmt, job);
    const columns = stmt.getColumnNames();
    stmt.free();
    return { columns, rows, truncated };
  } finally {
    db.close();
  }
}

answer(workerData as Required<SqlQueryJob>).then(
  (ok) => parentPort!.postMessage({ ok } satisfies SqlThreadReply),
  (e: unknown) =>
    parentPort!.postMessage({
      error: namedSqlError(e instanceof Error ? e.message : String(e), (workerData as Required<SqlQueryJob>).memory.sqliteHeapBytes),
    } satisfies SqlThreadReply),
);
