/** `vero worker`: executes evaluation workflows and their harbor runs, with this host's orphan reaper. */
import { Command } from 'commander';
import { createVeroWorker, installCliRuntimeLogger } from '../worker/create-worker';
import { ConnectionFlags, connectionSettings, parseDurationFlag, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { hostReaper } from './host-worker';

export function registerWorkerCommand(program: Command): void {
  withConnection(
    program
      .command('worker')
      .description('run a worker: executes evaluation workflows and their harbor runs')
      .option('--max-concurrent-tasks <n>', 'harbor processes at once on this worker', parseIntFlag('--max-concurrent-tasks'))
      .option(
        '--shutdown-grace <duration>',
        'on Ctrl-C/SIGTERM, how long running harbor processes get to finish; after that they are left running for the next worker on this host to adopt (their trials are kept)',
        parseDurationFlag('--shutdown-grace'),
        30,
      ),
  ).action(async (o: ConnectionFlags & { maxConcurrentTasks?: number; shutdownGrace: number }) => {
    installCliRuntimeLogger();
    const conn = connectionSettings(o);
    const { worker, connection, deployment } = await createVeroWorker({
      address: conn.address,
      namespace: conn.namespace,
      taskQueue: conn.taskQueue,
      maxConcurrentTasks: o.maxConcurrentTasks,
      shutdownGraceTime: `${o.shutdownGrace}s`,
    });
    const ready = { message: 'worker polling', taskQueue: conn.taskQueue, address: conn.address, namespace: conn.namespace };
    process.stderr.write(
      (process.env.VERO_LOG_FORMAT ?? '').toLowerCase() === 'json'
        ? `${JSON.stringify({ time: new Date().toISOString(), level: 'INFO', ...ready })}\n`
        : `worker polling ${conn.taskQueue} on ${conn.address} (namespace ${conn.namespace})\n`,
    );
    const reaper = await hostReaper(conn.address, deployment);
    // Worker.run installs SIGINT/SIGTERM handlers: in-flight harbor runs get --shutdown-grace to finish, then are
    // left running (detached) for the next worker to adopt.
    await worker.run();
    await reaper.stop();
    await connection.close();
  });
}
