/**
 * `vero query`: one read-only SQL statement over the evaluations' views (model/query-views.ts, docs/query.md),
 * with a row limit and a time limit, on SQLite in WebAssembly (infra/sql-engine.ts).
 */
import { ConfigError } from '../model/errors';
import { QUERY_VIEWS } from '../model/query-views';
import { runReadOnlySql, type SqlValue } from '../infra/sql-engine';
import { loadViewRows, type QuerySources, viewsNamedIn } from './query-tables';

export const QUERY_LIMITS = {
  /** Rows returned unless the caller says otherwise. */
  maxRows: 1_000,
  /** The most rows a caller may ask for. */
  maxRowsCeiling: 100_000,
  /** Seconds the statement may run unless the caller says otherwise. */
  timeoutSec: 30,
  timeoutSecCeiling: 600,
} as const;

export interface QueryOptions {
  /** At most this many rows come back (default 1,000; at most 100,000); `truncated` says when there were more. */
  maxRows?: number;
  /** The statement is stopped after this many seconds (default 30; at most 600). */
  timeoutSec?: number;
}

export interface QueryResult {
  columns: string[];
  rows: SqlValue[][];
  rowCount: number;
  truncated: boolean;
  maxRows: number;
  /** Milliseconds spent, reading the sources included. */
  elapsedMs: number;
}

function checkLimits(o: QueryOptions): { maxRows: number; timeoutSec: number } {
  const maxRows = o.maxRows ?? QUERY_LIMITS.maxRows;
  const timeoutSec = o.timeoutSec ?? QUERY_LIMITS.timeoutSec;
  const problems: string[] = [];
  if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > QUERY_LIMITS.maxRowsCeiling)
    problems.push(`max rows: expected 1 to ${QUERY_LIMITS.maxRowsCeiling}, got ${maxRows}`);
  if (!(timeoutSec > 0) || timeoutSec > QUERY_LIMITS.timeoutSecCeiling)
    problems.push(`timeout: expected more than 0 and at most ${QUERY_LIMITS.timeoutSecCeiling} s, got ${timeoutSec}`);
  if (problems.length) throw new ConfigError(problems.join('\n'));
  return { maxRows, timeoutSec };
}

/** Runs one read-only SQL statement over the views; a ConfigError when SQLite refuses it or a limit is bad. */
export async function queryEvaluations(sql: string, sources: QuerySources, opts: QueryOptions = {}): Promise<QueryResult> {
  const began = Date.now();
  const { maxRows, timeoutSec } = checkLimits(opts);
  if (!sql.trim()) throw new ConfigError('query: no SQL statement given');
  const rows = await loadViewRows({ ...sources, views: sources.views ?? viewsNamedIn(sql) });
  const tables = QUERY_VIEWS.map((v) => ({ name: v.name, columns: v.columns, rows: rows[v.name] }));
  const answer = await runReadOnlySql({ sql, tables, maxRows }, timeoutSec * 1000);
  return { ...answer, rowCount: answer.rows.length, maxRows, elapsedMs: Date.now() - began };
}
