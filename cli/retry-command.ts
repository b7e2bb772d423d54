/** retry: run chosen tasks of a finished evaluation again, or queue them in a running one (client/retry.ts). */
import { Command } from 'commander';
import { awaitResult, withTasks } from '../client/eval-results';
import { type RetryStarted, retryTasks } from '../client/retry';
import { ExitCode } from '../model/errors';
import { resultSummary, taskTable } from './format';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print, printJson } from './print';

const retrying = (id: string, s: RetryStarted): string => {
  const what = [
    ...(s.tasks.length ? [`${s.tasks.length} task(s) (${s.tasks.join(', ')})`] : []),
    ...(s.queued?.errors ? ['its error rows'] : []),
  ];
  return s.queued
    ? `queued in the running ${id}: ${what.join(' and ')} run again once every task has finished`
    : `retrying ${s.tasks.length} task(s) of ${id}: ${s.tasks.join(', ')}`;
};

export function registerRetryCommand(program: Command): void {
  withConnection(
    program
      .command('retry <evalId>')
      .description(
        'run chosen tasks of a finished evaluation again (fresh Harbor jobs; nothing else re-runs): a new run of its workflow, recorded in its history, whose result replaces those rows (each says when it was retried and what it replaced). On a running evaluation the retry is queued (an update in its history): once every task has finished, that run follows',
      )
      .option('--task <name...>', 'the tasks to run again (names as in `vero results`)')
      .option('--errors', 'run every task whose row is an error again')
      .option('--wait', 'wait for the retried tasks and print the updated result')
      .option(
        '--json',
        'machine-readable output: {evalId, runId, previousRunId, tasks, requestedAt[, queued][, result]} (vero schema retry)',
      ),
  ).action(async (id: string, o: ConnectionFlags & { task?: string[]; errors?: boolean; wait?: boolean; json?: boolean }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const started = await retryTasks(client, id, { tasks: o.task, errors: o.errors });
    if (!o.wait) {
      if (o.json) return printJson(started);
      return print(`${retrying(id, started)}${started.runId ? ` (run ${started.runId})` : ''}; vero status ${id}`);
    }
    if (!o.json) print(`${retrying(id, started)}…`);
    const result = withTasks(await awaitResult(client, id));
    if (result.status !== 'completed')
      process.exitCode = result.status === 'budget_exhausted' ? ExitCode.budgetExhausted : ExitCode.evaluationFailed;
    if (o.json) return printJson({ ...started, result });
    const retried = (result.tasks ?? []).filter((t) => t.retried?.at === started.requestedAt);
    print(`${taskTable(retried)}\n\n${resultSummary(result)}`);
  });
}
