/** `vero list`: evaluations with candidates and scores, from Temporal visibility. */
import { Command } from 'commander';
import { listEvaluations } from '../client/eval-listing';
import { labelOf } from '../client/view-data';
import { fmtCost, fmtScore, table } from './format';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { print, printJson } from './print';
import { digestScope } from './config-scope';

export function registerListCommand(program: Command): void {
  withConnection(
    program
      .command('list')
      .description('evaluations with candidates and scores (from Temporal visibility); with -c, only those comparable to that config')
      .option('--all', 'every evaluation, whatever its config')
      .option('--limit <n>', 'at most this many, newest first (default: all, paged through visibility)', parseIntFlag('--limit'))
      .option('--json', 'machine-readable output'),
  ).action(async (o: ConnectionFlags & { json?: boolean; all?: boolean; limit?: number }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const rows = await listEvaluations(client, { configDigest: digestScope(o), ...(o.limit ? { limit: o.limit + 1 } : {}) });
    const more = o.limit !== undefined && rows.length > o.limit;
    if (more) rows.length = o.limit!;
    if (more && !o.json) process.stderr.write(`showing the newest ${o.limit}; there are more (raise --limit, or drop it for all)\n`);
    if (o.json) return printJson(rows);
    print(
      table(
        ['evaluation', 'candidate', 'status', 'score', 'cost', 'started'],
        rows.map((r) => [
          r.evalId,
          r.candidate ? labelOf(r) : null,
          r.status,
          fmtScore(r.score),
          fmtCost(r.costUsd),
          r.startedAt.toISOString(),
        ]),
      ),
    );
  });
}
