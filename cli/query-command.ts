/** `vero query "SQL"`: read-only SQL over evaluations, tasks, trials, rewards, errors and spend (docs/query.md). */
import { Command, Option } from 'commander';
import { QUERY_LIMITS, queryEvaluations, type QueryResult } from '../client/query';
import { ConfigError } from '../model/errors';
import { QUERY_VIEWS } from '../model/query-views';
import { table } from './format';
import { commandConfig, configPath, ConnectionFlags, connectionSettings, connectTo, parseDurationFlag, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { print, printJson } from './print';

interface QueryFlags extends ConnectionFlags {
  json?: boolean;
  csv?: boolean;
  maxRows?: number;
  timeout?: number;
  home?: string;
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(r: Pick<QueryResult, 'columns' | 'rows'>): string {
  return [r.columns, ...r.rows].map((row) => row.map(csvField).join(',')).join('\r\n');
}

/** The views and their columns, as `vero query` with no statement prints them. */
function viewsText(): string {
  return QUERY_VIEWS.map(
    (v) =>
      `${v.name}: ${v.doc}\n${table(
        ['column', 'type', 'meaning'],
        v.columns.map((c) => [c.name, c.type, c.doc]),
      )}`,
  ).join('\n\n');
}

export function registerQueryCommand(program: Command): void {
  withConnection(
    program
      .command('query [sql]')
      .description(
        'one read-only SQL statement (SQLite) over the views evaluations, tasks, trials, rewards, errors and spend; without SQL, the views and their columns',
      )
      .option('--json', 'machine-readable output: {columns, rows, rowCount, truncated, maxRows, elapsedMs} (vero schema query)')
      .option('--csv', 'CSV (RFC 4180): a header line, then the rows')
      .option(
        '--max-rows <n>',
        `at most this many rows (default ${QUERY_LIMITS.maxRows}, at most ${QUERY_LIMITS.maxRowsCeiling}); more are cut, and the output says so`,
        parseIntFlag('--max-rows'),
      )
      .option(
        '--timeout <duration>',
        `stop the statement after this long (default ${QUERY_LIMITS.timeoutSec}s, at most ${QUERY_LIMITS.timeoutSecCeiling}s)`,
        parseDurationFlag('--timeout'),
      )
      .addOption(new Option('--home <dir>', "also read this vero home's result files (default: the home of -c vero.yaml)").env('VERO_HOME'))
      .addHelpText(
        'after',
        `
Read-only, enforced by SQLite (PRAGMA query_only, one statement, an in-memory copy): a write is refused.
Evaluations come from Temporal (their results, or the rows so far while not completed) and from the home's
result files that Temporal no longer lists; trials, rewards and trial errors from the job dirs on this host.
Views and columns: docs/query.md, or \`vero query\` with no SQL. Examples:
  vero query "SELECT candidate_ref, score, n_errors FROM evaluations ORDER BY score DESC"
  vero query --csv "SELECT task, avg(score) FROM tasks GROUP BY task"
  vero query --json "SELECT type, count(*) n FROM errors GROUP BY type ORDER BY n DESC"
Exit codes: 0 answered; 2 the statement or a flag was refused (SQLite's message); 3 no Temporal server.`,
      ),
  ).action(async (sql: string | undefined, o: QueryFlags) => {
    if (o.json && o.csv) throw new ConfigError('--json and --csv: choose one output');
    if (sql === undefined) return o.json ? printJson(QUERY_VIEWS) : print(viewsText());
    const file = configPath(o);
    const home = o.home ?? (file ? commandConfig(file).home : null);
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json || o.csv);
    try {
      const r = await queryEvaluations(sql, { client, home }, { maxRows: o.maxRows, timeoutSec: o.timeout });
      const cut = r.truncated ? `more rows matched: showing the first ${r.maxRows} (--max-rows raises it)` : null;
      if (o.json) return printJson(r);
      if (cut) process.stderr.write(`${cut}\n`);
      if (o.csv) return print(toCsv(r));
      print(
        `${table(
          r.columns,
          r.rows.map((row) => row.map((v) => (v === null ? null : typeof v === 'number' ? v : String(v)))),
        )}\n(${r.rowCount} row(s))`,
      );
    } finally {
      await client.connection.close();
    }
  });
}
