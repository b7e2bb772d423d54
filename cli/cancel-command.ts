/** `vero cancel`: cancel an evaluation (its running harbor processes are stopped). */
import { Command } from 'commander';
import { cancelEvaluation } from '../client/cancel';
import { requireEvalId } from '../client/eval-id';
import { ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print } from './print';

export function registerCancelCommand(program: Command): void {
  withConnection(
    program.command('cancel <evalId>').description('cancel an evaluation (running harbor processes are stopped); only evaluation ids'),
  ).action(async (id: string, o: ConnectionFlags) => {
    requireEvalId(id, 'cancel');
    const client = await connectTo(connectionSettings(o));
    const out = await cancelEvaluation(client, id);
    print(out.cancelled ? `cancellation requested for ${id}` : `${id} has ${out.reason}; nothing to cancel`);
  });
}
