/** `vero set-concurrency`: how many tasks a running evaluation runs at once (a Temporal update). */
import { Command } from 'commander';
import { MAX_CONCURRENCY } from '../model/evaluation/config';
import { ConfigError } from '../model/errors';
import { setConcurrency } from '../client/running-eval';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { print, printJson } from './print';

export function registerSetConcurrencyCommand(program: Command): void {
  withConnection(
    program
      .command('set-concurrency <evalId> <n>')
      .description(
        'change how many tasks a running evaluation runs at once: raising starts tasks at once; lowering lets running tasks finish and starts none until fewer than N run (a Temporal update, recorded in its history)',
      )
      .option('--json', 'machine-readable output: {"evalId", "previous", "concurrency"}'),
  ).action(async (id: string, n: string, o: ConnectionFlags & { json?: boolean }) => {
    const concurrency = parseIntFlag('N')(n);
    if (concurrency < 1 || concurrency > MAX_CONCURRENCY) throw new ConfigError(`N: expected 1 to ${MAX_CONCURRENCY}, got ${concurrency}`);
    const client = await connectTo(connectionSettings(o), o.json);
    const change = await setConcurrency(client, id, concurrency);
    if (o.json) return printJson({ evalId: id, ...change });
    const how =
      change.concurrency < change.previous
        ? '; running tasks finish, and no task starts until fewer than that run'
        : change.concurrency > change.previous
          ? '; more tasks start now'
          : '';
    print(`concurrency of ${id}: ${change.previous} → ${change.concurrency}${how}`);
  });
}
