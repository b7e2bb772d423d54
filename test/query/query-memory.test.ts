/**
 * A query's memory is bounded (SQLite's heap, its temporary sorter, the answer's rows): a statement that needs
 * more is refused with a named reason, quickly, instead of growing the process by gigabytes. The engine as
 * `vero query` and the MCP `query` tool run it (infra/sql-engine.ts).
 */
import { runReadOnlySql } from '../../infra/sql-engine';

jest.setTimeout(120_000);

const tables = [{ name: 'one', columns: [{ name: 'x', type: 'INTEGER' as const }], rows: [[1]] }];
const numbers = (n: number) => `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${n})`;
const small = { sqliteHeapBytes: 64 * 2 ** 20, answerBytes: 16 * 2 ** 20 };

test('an ORDER BY over random blobs past the heap limit is refused as out of memory', async () => {
  // 200,000 blobs of 1,000 bytes: a 200 MB sort, over a 64 MB heap (the real limit is larger; the rule is the same).
  const sorted = runReadOnlySql(
    { sql: `${numbers(200_000)} SELECT randomblob(1000) b FROM c ORDER BY b`, tables, maxRows: 1, memory: small },
    60_000,
  );
  await expect(sorted).rejects.toThrow(/^query: out of memory: SQLite needed more than 64 MB .*the memory limit of a query/);
});

test('one huge value is refused as out of memory', async () => {
  await expect(runReadOnlySql({ sql: 'SELECT length(randomblob(300000000))', tables, maxRows: 1, memory: small }, 60_000)).rejects.toThrow(
    /out of memory: SQLite needed more than 64 MB/,
  );
});

test('an answer past its byte limit is refused, not gathered', async () => {
  const big = runReadOnlySql(
    { sql: `${numbers(1000)} SELECT hex(randomblob(20000)) FROM c`, tables, maxRows: 1000, memory: small },
    60_000,
  );
  await expect(big).rejects.toThrow(/out of memory: its answer passed 16 MB, the memory limit of a query/);
});

test('within the limits a query answers', async () => {
  const ok = await runReadOnlySql(
    { sql: `${numbers(1000)} SELECT count(*) FROM (SELECT randomblob(1000) b FROM c ORDER BY b)`, tables, maxRows: 5, memory: small },
    60_000,
  );
  expect(ok.rows).toEqual([[1000]]);
});
