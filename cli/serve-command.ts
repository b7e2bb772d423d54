/**
 * `vero serve`: the eval sidecar itself (its worker, HTTP server and gateway), loaded only when it runs: the
 * agent-side commands (`vero eval`, `eval wait`, `budget`, …) are HTTP clients an optimizer runs many times, and
 * start in a fraction of the time without it.
 */
import { Command } from 'commander';
import { parseIntFlag } from './int-flag';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the eval sidecar of a compiled task (metered evaluations, hidden splits, finalize)')
    .requiredOption('--config <serve.json>', 'the serve config written by `vero build`')
    .option('--address <host:port>', 'an existing Temporal server (default: start one, SQLite under the home dir)')
    .option('--task-queue <queue>', 'task queue of the in-process worker', 'vero-sidecar')
    .option('--port <port>', 'override the config port (0 = any free port)', parseIntFlag('--port'))
    .option('--host <host>', 'override the config host')
    .action(async (o: { config: string; address?: string; taskQueue: string; port?: number; host?: string }) => {
      const { serve } = require('../sidecar/serve') as typeof import('../sidecar/serve');
      const s = await serve(o.config, { address: o.address, taskQueue: o.taskQueue, port: o.port, host: o.host });
      process.stdout.write(`listening on ${s.port}\n`);
      let closing = false;
      const stop = () => {
        if (closing) return;
        closing = true;
        void s.close().then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      await new Promise(() => undefined);
    });
}
