/** `vero pause`: hold a running evaluation's tasks (client/pause.ts); `vero resume` lets them go on. */
import { Command } from 'commander';
import { pauseEvaluation, type PauseOutcome } from '../client/pause';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print, printJson } from './print';

/** `--json`'s help, for pause and resume: the same answer. */
export const PAUSE_JSON_HELP = 'machine-readable output: {"evalId", "paused", "since", "stopRunning", "changed"} (vero schema pause)';

export function registerPauseCommand(program: Command): void {
  withConnection(
    program
      .command('pause <evalId>')
      .description(
        'pause a running evaluation: no task starts until `vero resume`; running tasks finish (or stop, with --stop-running). A Temporal update, recorded in its history: it survives worker and server restarts',
      )
      .option('--stop-running', 'also stop the tasks running now; they run again on resume, their Harbor jobs resumed (scored trials kept)')
      .option('--json', PAUSE_JSON_HELP),
  ).action(async (id: string, o: ConnectionFlags & { json?: boolean; stopRunning?: boolean }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const out = await pauseEvaluation(client, id, { stopRunning: o.stopRunning ?? false });
    if (o.json) return printJson(out);
    print(pausedText(out));
  });
}

function pausedText(o: PauseOutcome): string {
  const running = o.stopRunning ? 'running tasks are being stopped (they run again on resume)' : 'running tasks finish';
  return `${o.evalId} ${o.changed ? 'paused' : 'was already paused'} (since ${o.since}): no task starts; ${running}. Resume: vero resume ${o.evalId}`;
}
