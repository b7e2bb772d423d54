/** The SQL engine's worker thread (sql-engine.ts): builds the tables, runs the one statement, sends the answer. */
import { parentPort, workerData } from 'node:worker_threads';
import initSqlJs from 'sql.js';
import { ConfigError } from '../model/errors';
import type { SqlAnswer, SqlQueryJob, SqlThreadReply } from './sql-engine';

const quoteName = (name: string): string => `"${name.replace(/"/g, '""')}"`;

async function answer(job: SqlQueryJob): Promise<SqlAnswer> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  try {
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
    const rows: SqlAnswer['rows'] = [];
    let truncated = false;
    while (stmt.step()) {
      if (rows.length === job.maxRows) {
        truncated = true;
        break;
      }
      rows.push(stmt.get() as SqlAnswer['rows'][number]);
    }
    const columns = stmt.getColumnNames();
    stmt.free();
    return { columns, rows, truncated };
  } finally {
    db.close();
  }
}

answer(workerData as SqlQueryJob).then(
  (ok) => parentPort!.postMessage({ ok } satisfies SqlThreadReply),
  (e: unknown) => parentPort!.postMessage({ error: e instanceof Error ? e.message : String(e) } satisfies SqlThreadReply),
);
