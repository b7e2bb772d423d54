/** `vero dev`: a local Temporal dev server (SQLite, Web UI) plus a worker; Ctrl-C stops both. */
import { Command, Option } from 'commander';
import { homePaths } from '../model/paths';
import { DB_SYNC_MODES, startDevServer, type DbSync } from '../infra/dev-server';
import { defaultHome } from '../infra/eval-config-file';
import { findTemporalCli } from '../infra/temporal-cli';
import { installCliRuntimeLogger } from '../worker/create-worker';
import { EVALUATIONS_QUERY, uiListLink } from '../client/connection';
import { TEMPORAL_DEFAULTS } from '../model/evaluation/config';
import { parseDurationFlag } from './options';
import { parseIntFlag } from './int-flag';
import { handleInterrupts, killGroup } from './interrupts';
import { print } from './print';
import { startWorker } from './host-worker';

interface DevFlags {
  db?: string;
  dbSync: DbSync;
  port: number;
  uiPort?: number;
  taskQueue: string;
  worker: boolean;
  maxConcurrentTasks?: number;
  shutdownGrace: number;
}

export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('a local Temporal dev server (SQLite, Web UI) plus a worker; Ctrl-C stops both')
    .option('--db <file>', 'SQLite file: the durability (default <VERO_HOME>/temporal.db)')
    .addOption(
      new Option(
        '--db-sync <mode>',
        'how the SQLite file is flushed: normal = not at each commit (a crash of any process loses nothing; a power loss or OS crash may lose the latest history, which re-runs those tasks, resuming their harbor jobs), full = fsync every commit (more CPU per task)',
      )
        .choices(DB_SYNC_MODES)
        .default('normal'),
    )
    .option('--port <port>', 'frontend gRPC port', parseIntFlag('--port'), 7233)
    .option('--ui-port <port>', 'Web UI port (default port + 1000)', parseIntFlag('--ui-port'))
    .option('--task-queue <queue>', 'task queue of the in-process worker', TEMPORAL_DEFAULTS.task_queue)
    .option('--no-worker', 'start only the server')
    .option(
      '--max-concurrent-tasks <n>',
      'harbor processes at once on the worker (as `vero worker`)',
      parseIntFlag('--max-concurrent-tasks'),
    )
    .option(
      '--shutdown-grace <duration>',
      'on Ctrl-C/SIGTERM, how long running harbor processes get to finish before they are left running for the next start to adopt',
      parseDurationFlag('--shutdown-grace'),
      30,
    )
    .action(runDev);
}

/** The server, then (unless --no-worker) the worker; both run until Ctrl-C, which ends `vero dev` (exit 0), also while it starts. */
async function runDev(o: DevFlags): Promise<void> {
  installCliRuntimeLogger({ ownSignals: true });
  const interrupts = handleInterrupts(0);
  const db = o.db ?? homePaths(defaultHome()).temporalDb;
  const server = await interrupts.start(
    (onKill) =>
      startDevServer({
        temporalCli: findTemporalCli(),
        port: o.port,
        ui: true,
        uiPort: o.uiPort,
        dbFile: db,
        dbSync: o.dbSync,
        logFile: `${db}.log`,
        onSpawn: (pid) => onKill(killGroup(pid)),
      }),
    (s) => s.stop(),
  );
  const evaluations = uiListLink(server.uiUrl, TEMPORAL_DEFAULTS.namespace, EVALUATIONS_QUERY);
  print(`Temporal dev server ${server.address} (db ${db})\nWeb UI: ${server.uiUrl}${evaluations ? `\nevaluations: ${evaluations}` : ''}`);
  if (o.worker) {
    await interrupts.start(
      () =>
        startWorker(server.address, {
          taskQueue: o.taskQueue,
          maxConcurrentTasks: o.maxConcurrentTasks,
          shutdownGraceTime: `${o.shutdownGrace}s`,
        }),
      (w) => w.stop(),
    );
    print(`worker polling ${o.taskQueue}`);
  }
  await new Promise(() => undefined);
}
