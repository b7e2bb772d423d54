/** `vero spend-pool`: a spend pool's caps, what its evaluations spent, and whether its cap was reached. */
import { WorkflowNotFoundError } from '@temporalio/client';
import { Command } from 'commander';
import { ConfigError } from '../model/errors';
import { spendPoolState } from '../client/spend-pools';
import { capsText, fmtCost, table } from './format';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print, printJson } from './print';

export function registerSpendPoolCommand(program: Command): void {
  withConnection(
    program
      .command('spend-pool <name>')
      .description(
        "a spend pool's caps, what the evaluations that name it (execution.spend_pool) spent, each and together, and whether its cap was reached (it has ended once reached and none of them runs)",
      )
      .option(
        '--json',
        "machine-readable output: the pool workflow's state (name, maxCostUsd, maxTokens, spent, reached, members, spentBy)",
      ),
  ).action(async (name: string, o: ConnectionFlags & { json?: boolean }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const state = await spendPoolState(client, name).catch((e: unknown) => {
      if (e instanceof WorkflowNotFoundError)
        throw new ConfigError(
          `spend pool "${name}": none on this server and namespace (an evaluation with execution.spend_pool starts it)`,
        );
      throw e;
    });
    if (o.json) return printJson(state);
    print(`spend pool ${state.name}: ${capsText(state)}`);
    print(
      `spent     $${state.spent.costUsd.toFixed(4)}, ${state.spent.tokens} tokens${state.spent.unmetered ? ` (${state.spent.unmetered} task(s) reported no cost or tokens)` : ''}`,
    );
    print(`status    ${state.reached ? `cap reached: ${state.reached}` : 'open'}; ${state.members.length} evaluation(s) running on it`);
    const rows = Object.entries(state.spentBy).map(([id, sp]) => [
      id,
      fmtCost(sp.costUsd),
      sp.tokens,
      state.members.includes(id) ? 'running' : 'ended',
    ]);
    if (rows.length) print(`\n${table(['evaluation', 'cost', 'tokens', 'state'], rows)}`);
  });
}
