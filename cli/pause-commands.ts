/** pause, resume: hold a running evaluation's tasks and let them go on (client/pause.ts). */
import { Command } from 'commander';
import { pauseEvaluation, resumeEvaluation, type PauseOutcome } from '../client/pause';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';

const print = (s: string): void => void process.stdout.write(`${s}\n`);
const JSON_HELP = 'machine-readable output: {"evalId", "paused", "since", "stopRunning", "changed"} (vero schema pause)';

export function registerPauseCommands(program: Command): void {
  withConnection(
    program
      .command('pause <evalId>')
      .description(
        'pause a running evaluation: no task starts until `vero resume`; running tasks finish (or stop, with --stop-running). A Temporal update, recorded in its history: it survives worker and server restarts',
      )
      .option('--stop-running', 'also stop the tasks running now; they run again on resume, their Harbor jobs resumed (scored trials kept)')
      .option('--json', JSON_HELP),
  ).action(async (id: string, o: ConnectionFlags & { json?: boolean; stopRunning?: boolean }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const out = await pauseEvaluation(client, id, { stopRunning: o.stopRunning ?? false });
    if (o.json) return print(JSON.stringify(out, null, 2));
    print(pausedText(out));
  });
  withConnection(
    program
      .command('resume <evalId>')
      .description('resume a paused evaluation: its tasks start again, first those a pause stopped (recorded in its history)')
      .option('--json', JSON_HELP.replace('pause)', 'resume)')),
  ).action(async (id: string, o: ConnectionFlags & { json?: boolean }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const out = await resumeEvaluation(client, id);
    if (o.json) return print(JSON.stringify(out, null, 2));
    print(out.changed ? `${id} resumed: tasks start again` : `${id} was not paused; nothing changed`);
  });
}

function pausedText(o: PauseOutcome): string {
  const running = o.stopRunning ? 'running tasks are being stopped (they run again on resume)' : 'running tasks finish';
  return `${o.evalId} ${o.changed ? 'paused' : 'was already paused'} (since ${o.since}): no task starts; ${running}. Resume: vero resume ${o.evalId}`;
}
