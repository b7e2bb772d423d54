/** `vero results`: an evaluation's per-task results; of one not completed, the rows so far, marked partial. */
import { Command } from 'commander';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import type { TaskResult } from '../model/evaluation/task-result';
import { withTasks } from '../client/eval-results';
import { requireEvalId } from '../client/eval-id';
import { partialResults } from '../client/partial-results';
import { resultSummary, taskTable } from './format';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print, printJson } from './print';
import { reportFailure } from './failure-report';

export function registerResultsCommand(program: Command): void {
  withConnection(
    program
      .command('results <evalId>')
      .description('per-task results; of an evaluation not completed (running, cancelled, failed), the rows so far, marked partial')
      .option('--json', 'machine-readable output'),
  ).action(async (id: string, o: ConnectionFlags & { json?: boolean }) => {
    requireEvalId(id, 'results');
    const client = await connectTo(connectionSettings(o), o.json);
    // Not completed (running, cancelled, failed): the rows so far, marked partial, instead of waiting.
    const status = (await client.workflow.getHandle(id).describe()).status.name;
    if (status !== 'COMPLETED') {
      const p = await partialResults(client, id);
      if (o.json) printJson(p);
      else
        print(
          `${taskTable(p.tasks.map((t) => ({ ...t, runs: 0, timedOut: false, jobDir: '' })) as TaskResult[])}\n\npartial   ${p.nWithResults} of ${p.nTasks} task(s) have results so far; the evaluation is ${status.toLowerCase()}${p.pending.length ? ` (${p.pending.length} pending)` : ''}`,
        );
      if (status === 'RUNNING') return;
    }
    let r: CandidateResult;
    try {
      r = withTasks((await client.workflow.getHandle(id).result()) as CandidateResult);
    } catch (e) {
      process.exitCode = reportFailure(e);
      return;
    }
    if (o.json) return printJson(r);
    print(`${taskTable(r.tasks ?? [])}\n\n${resultSummary(r)}`);
  });
}
