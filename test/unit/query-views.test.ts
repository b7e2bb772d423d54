/** The query views as documented, and the SQL engine's read-only rules and limits on rows it is given. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runReadOnlySql } from '../../infra/sql-engine';
import { QUERY_VIEWS } from '../../model/query-views';
import { toCsv } from '../../cli/query-command';
import { viewsNamedIn } from '../../client/query-tables';
import { ROOT } from '../helpers/fixtures';

test('docs/query.md documents every view and every column, with its type', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'query.md'), 'utf8');
  for (const v of QUERY_VIEWS) {
    const section = doc.split(`### \`${v.name}\``)[1]?.split('### ')[0];
    expect({ view: v.name, documented: section !== undefined }).toEqual({ view: v.name, documented: true });
    for (const c of v.columns) expect(section).toMatch(new RegExp(`\\| \`${c.name}\`\\s*\\| ${c.type}\\s*\\|`));
  }
});

const tables = [
  {
    name: 'tasks',
    columns: [
      { name: 'task', type: 'TEXT' as const },
      { name: 'score', type: 'REAL' as const },
    ],
    rows: [
      ['a', 1],
      ['b', 0.5],
      ['c', null],
    ],
  },
];
const run = (sql: string, maxRows = 100, timeoutMs = 20_000) => runReadOnlySql({ sql, tables, maxRows }, timeoutMs);

test('one statement, read-only, limited', async () => {
  await expect(run('SELECT task FROM tasks WHERE score > 0.7')).resolves.toEqual({ columns: ['task'], rows: [['a']], truncated: false });
  await expect(run('SELECT task FROM tasks ORDER BY task', 2)).resolves.toMatchObject({ rows: [['a'], ['b']], truncated: true });
  await expect(run('SELECT count(*) FROM tasks; -- a comment')).resolves.toMatchObject({ rows: [[3]] });
  await expect(run('UPDATE tasks SET score = 1 RETURNING task')).rejects.toThrow(/attempt to write a readonly database/);
  await expect(run('INSERT INTO tasks VALUES (1, 2)')).rejects.toThrow(/not a query/);
  await expect(run("ATTACH '/tmp/vero-query.db' AS x")).rejects.toThrow(/not a query/);
  await expect(run('SELECT 1; DROP TABLE tasks')).rejects.toThrow(/one statement at a time/);
  await expect(run('SELECT 1; SELEC 2')).rejects.toThrow(/one statement at a time/);
  await expect(run('  -- only a comment')).rejects.toThrow(/no SQL statement/);
  await expect(run('SELECT nope FROM tasks')).rejects.toThrow(/no such column: nope/);
  await expect(run('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c', 10, 500)).rejects.toThrow(
    /stopped after 0.5 s, the time limit/,
  );
  expect(fs.existsSync('/tmp/vero-query.db')).toBe(false);
});

test('CSV quoting and the views a statement names', () => {
  expect(
    toCsv({
      columns: ['a', 'b'],
      rows: [
        ['x,y', 'say "hi"'],
        [null, 1],
      ],
    }),
  ).toBe('a,b\r\n"x,y","say ""hi"""\r\n,1');
  expect(viewsNamedIn('SELECT * FROM Tasks t JOIN rewards USING (trial)')).toEqual(['tasks', 'rewards']);
});
