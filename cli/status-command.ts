/** `vero status`: progress and state of an evaluation, and why it is not moving when Temporal knows. */
import { tearingDownText } from '../model/evaluation/progress-details';
import { Command } from 'commander';
import { settledProgress } from '../model/evaluation/progress';
import { evaluationStartedAt, progressIfAnswered, retryingActivities } from '../client/running-eval';
import { requireEvalId } from '../client/eval-id';
import { workflowPollers } from '../client/worker-capacity';
import { uiLink } from '../client/connection';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print, printJson } from './print';

export function registerStatusCommand(program: Command): void {
  withConnection(
    program.command('status <evalId>').description('progress and state of an evaluation').option('--json', 'machine-readable output'),
  ).action(async (id: string, o: ConnectionFlags & { json?: boolean }) => {
    requireEvalId(id, 'status');
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json);
    const d = await client.workflow.getHandle(id).describe();
    // A query needs a worker: with none polling, say so at once instead of waiting for the query to time out.
    const workers = await workflowPollers(client, d.taskQueue).catch(() => null);
    const asked = workers === 0 ? null : await progressIfAnswered(client, id);
    const progress = asked ? settledProgress(asked, d.status.name) : null;
    const notes = [
      ...(d.status.name === 'RUNNING' ? retryingActivities(d) : []),
      ...(workers === 0 && d.status.name === 'RUNNING'
        ? [`no worker is polling ${d.taskQueue}: nothing runs until one does (vero worker, or vero dev)`]
        : []),
      ...(workers !== 0 && !asked ? ['no worker answered the progress query (busy or just starting)'] : []),
    ];
    const state = {
      evalId: id,
      workflowStatus: d.status.name,
      // The evaluation's first start (a retry or a continue-as-new starts a run of its own).
      startedAt: (await evaluationStartedAt(client, id, d.runId).catch(() => null)) ?? d.startTime,
      finishedAt: d.closeTime ?? null,
      progress,
      notes,
      ui: uiLink(conn.uiUrl, conn.namespace, id),
    };
    if (o.json) return printJson(state);
    print(`${id}: ${d.status.name}`);
    if (progress?.phase === 'cancelling' && d.status.name === 'RUNNING')
      print(
        `cancelling: ${progress.running + (progress.tearingDown ?? 0)} task(s) still being stopped (their harbors tearing down); ${progress.done}/${progress.total} done`,
      );
    else if (progress?.paused && d.status.name === 'RUNNING')
      print(
        `paused since ${progress.paused.since}: no task starts; ${progress.running} running${progress.running ? (progress.paused.stopRunning ? ' (being stopped)' : ' (finishing)') : ''}; ${progress.done}/${progress.total} done, ${progress.errors} errors (vero resume ${id})`,
      );
    else if (progress)
      print(
        d.status.name === 'RUNNING'
          ? `${progress.phase}: ${progress.done}/${progress.total} done, ${progress.running} running${tearingDownText(progress)}, ${progress.errors} errors${progress.concurrency ? `, concurrency ${progress.concurrency}` : ''}`
          : `${d.status.name.toLowerCase()}: ${progress.done}/${progress.total} done, ${progress.errors} errors${progress.stopped ? `, ${progress.stopped} stopped while running` : ''}`,
      );
    if (progress?.spendCapReached)
      print(`spend cap reached: ${progress.spendCapReached}; ${progress.notRun ?? 0} task(s) not run so far, none starts`);
    for (const n of notes) print(`note: ${n}`);
    if (state.ui) print(`Web UI: ${state.ui}`);
  });
}
