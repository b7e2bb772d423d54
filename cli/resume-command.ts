/** `vero resume`: a paused evaluation's tasks start again (client/pause.ts). */
import { Command } from 'commander';
import { resumeEvaluation } from '../client/pause';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print, printJson } from './print';
import { PAUSE_JSON_HELP } from './pause-command';

export function registerResumeCommand(program: Command): void {
  withConnection(
    program
      .command('resume <evalId>')
      .description('resume a paused evaluation: its tasks start again, first those a pause stopped (recorded in its history)')
      .option('--json', PAUSE_JSON_HELP.replace('pause)', 'resume)')),
  ).action(async (id: string, o: ConnectionFlags & { json?: boolean }) => {
    const client = await connectTo(connectionSettings(o), o.json);
    const out = await resumeEvaluation(client, id);
    if (o.json) return printJson(out);
    print(out.changed ? `${id} resumed: tasks start again` : `${id} was not paused; nothing changed`);
  });
}
