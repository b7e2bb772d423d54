/** retry: run chosen tasks of a finished evaluation again (client/retry.ts). */
import { Command } from 'commander';
import { awaitResult, withTasks } from '../client/eval-results';
import { retryTasks } from '../client/retry';
import { ExitCode } from '../model/errors';
import { resultSummary, taskTable } from './format';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';

const print = (s: string): void => void process.stdout.write(`${s}\n`);

export function registerRetryCommand(program: Command): void {
  withConnection(
    program
      .command('retry <evalId>')
      .description(
        'run chosen tasks of a finished evaluation again (fresh Harbor jobs; nothing else re-runs): a new run of its workflow, recorded in its history, whose result replaces those rows (each says when it was retried and what it replaced)',
      )
      .option('--task <name...>', 'the tasks to run again (names as in `vero results`)')
      .option('--errors', 'run every task whose row is an error again')
      .option('--wait', 'wait for the retried tasks and print the updated result')
      .option('--json', 'machine-readable output: {evalId, runId, previousRunId, tasks, requestedAt[, result]} (vero schema retry)'),
  ).action(async (id: string, o: ConnectionFlags & { task?: string[]; errors?: boolean; wait?: boolean; json?: boolean }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const started = await retryTasks(client, id, { tasks: o.task, errors: o.errors });
    if (!o.wait) {
      if (o.json) return print(JSON.stringify(started, null, 2));
      return print(
        `retrying ${started.tasks.length} task(s) of ${id}: ${started.tasks.join(', ')} (run ${started.runId}); vero status ${id}`,
      );
    }
    if (!o.json) print(`retrying ${started.tasks.length} task(s) of ${id}: ${started.tasks.join(', ')}…`);
    const result = withTasks(await awaitResult(client, id));
    if (result.status !== 'completed')
      process.exitCode = result.status === 'budget_exhausted' ? ExitCode.budgetExhausted : ExitCode.evaluationFailed;
    if (o.json) return print(JSON.stringify({ ...started, result }, null, 2));
    const retried = (result.tasks ?? []).filter((t) => t.retried?.at === started.requestedAt);
    print(`${taskTable(retried)}\n\n${resultSummary(result)}`);
  });
}
