/** `vero clean`: remove what a home holds that nobody needs any more, by a retention rule (client/home-retention.ts). */
import { Command } from 'commander';
import { applyClean, planClean } from '../client/home-retention';
import { defaultHome } from '../infra/eval-config-file';
import { commandConfig, configPath, ConnectionFlags, connectionSettings, connectTo, parseDurationFlag, withConnection } from './options';
import { table } from './format';
import { print, printJson } from './print';

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

export function registerCleanCommand(program: Command): void {
  withConnection(
    program
      .command('clean')
      .description(
        'remove from the home what nobody needs any more: run dirs (Harbor jobs, logs) of evaluations not running and unchanged for --older-than, result files of evaluations Temporal no longer has, worktrees no running evaluation uses; lists them, removes them with --yes',
      )
      .option(
        '--older-than <duration>',
        'retention: keep what changed more recently than this (e.g. 7d, 12h; 0: keep nothing that may go)',
        (v: string) => (/^0+s?$/.test(v) ? 0 : parseDurationFlag('--older-than')(v)),
        7 * 86_400,
      )
      .option('--home <dir>', "the home to clean (default: vero.yaml's, else $VERO_HOME or ~/.vero)")
      .option('--yes', 'remove them (without it, only list what would go)')
      .option(
        '--forgotten',
        "also what belongs to evaluations this server does not know (their retention ended; a home shared with another server holds that server's too)",
      )
      .option(
        '--json',
        'machine-readable output: {"home", "olderThanSec", "removed", "bytes", "items": [{"path", "kind", "reason", "bytes"}]}',
      ),
  ).action(clean);
}

type CleanFlags = ConnectionFlags & { olderThan: number; home?: string; yes?: boolean; forgotten?: boolean; json?: boolean };

/** What may go, planned, then (with --yes) removed; printed as JSON or as a table. */
async function clean(o: CleanFlags): Promise<void> {
  const file = configPath(o);
  const home = o.home ?? (file ? commandConfig(file).home : defaultHome());
  const client = await connectTo(connectionSettings(o), o.json);
  const planned = await planClean(client, home, o.olderThan, { forgotten: o.forgotten });
  const { unknown } = planned;
  // Each item is checked again right before it goes: an evaluation started since the plan keeps its files.
  const applied = o.yes ? await applyClean(client, home, planned.items, o.olderThan) : null;
  const items = applied ? applied.removed : planned.items;
  const left = (applied?.left ?? []).map((l) => ({ path: l.item.path, reason: l.reason }));
  const bytes = items.reduce((n, i) => n + i.bytes, 0);
  if (o.json) return printJson({ home, olderThanSec: o.olderThan, removed: !!o.yes, bytes, items, unknown, left });
  for (const l of left) process.stderr.write(`left ${l.path}: ${l.reason}\n`);
  if (unknown.length)
    process.stderr.write(
      `note: ${unknown.length} evaluation(s) in ${home} are not on this server (maybe another server's): left; --forgotten includes them\n`,
    );
  if (items.length === 0) return print(`nothing to clean in ${home} (retention ${o.olderThan} s)`);
  print(
    `${table(
      ['kind', 'size', 'why', 'path'],
      items.map((i) => [i.kind, mib(i.bytes), i.reason, i.path]),
    )}\n`,
  );
  print(
    o.yes
      ? `removed ${items.length} item(s), ${mib(bytes)} from ${home}`
      : `would remove ${items.length} item(s), ${mib(bytes)}; add --yes to remove them`,
  );
}
