/** `vero worker`, `vero dev` (dev server + Web UI + worker) and `vero demo` (the README's main job). */
import { homePaths } from '../model/paths';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { DB_SYNC_MODES, startDevServer, type DbSync } from '../infra/dev-server';
import { defaultHome, loadEvalConfig } from '../infra/eval-config-file';
import { CandidateResult } from '../model/candidate-result';
import { ConfigError } from '../model/errors';
import { findTemporalCli } from '../infra/temporal-cli';
import { PROJECT_ROOT } from '../infra/package-root';
import { ensureHarbor, makeAgentRepo } from '../infra/foreground';
import { createVeroWorker, installCliRuntimeLogger } from '../worker/create-worker';
import { connect, EVALUATIONS_QUERY, uiLink, uiListLink } from '../client/connection';
import { pickBest, withTasks } from '../client/eval-results';
import { prepareEvalInput } from '../client/eval-input';
import { startOrAttach } from '../client/eval-start';
import { resultSummary, taskTable } from './format';
import { ConnectionFlags, connectionSettings, parseDurationFlag, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { startOrphanReaper } from '../worker/orphan-reaper';
import { handleInterrupts, killGroup } from './interrupts';
import type { Deployment } from '../infra/deployment';
import { TEMPORAL_DEFAULTS, type EvalConfig } from '../model/eval-config';
import type { Client } from '@temporalio/client';
import { HARBOR_VERSION } from '../model/harbor/version';

const print = (s: string): void => void process.stdout.write(`${s}\n`);

/**
 * The orphan reaper of this host (worker/orphan-reaper.ts): harbor groups that a dead worker left behind and
 * that no attempt will adopt are stopped. VERO_REAPER_INTERVAL_MS sets how often it looks (default 60 s).
 */
async function hostReaper(address: string, deployment: Deployment): Promise<{ stop(): Promise<void> }> {
  const client = await connect(address, deployment.namespace);
  const reaper = startOrphanReaper({
    client,
    deployment,
    intervalMs: Number(process.env.VERO_REAPER_INTERVAL_MS) || 60_000,
    log: (message, meta) => process.stderr.write(`${new Date().toISOString()} [WARN] ${message} ${JSON.stringify(meta)}\n`),
  });
  return {
    stop: async () => {
      await reaper.stop();
      await client.connection.close();
    },
  };
}

const LINKS_DIE =
  "\n(the Web UI links work only while the demo's server runs, and it stops now: `vero demo --keep` keeps it up until Ctrl-C)";

export function registerDevCommands(program: Command): void {
  registerWorker(program);
  registerDev(program);
  registerDemo(program);
}

function registerWorker(program: Command): void {
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

function registerDev(program: Command): void {
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
    .action(
      async (o: {
        db?: string;
        dbSync: DbSync;
        port: number;
        uiPort?: number;
        taskQueue: string;
        worker: boolean;
        maxConcurrentTasks?: number;
        shutdownGrace: number;
      }) => {
        installCliRuntimeLogger({ ownSignals: true });
        // Ctrl-C is how `vero dev` ends (exit 0), also while it starts.
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
        print(
          `Temporal dev server ${server.address} (db ${db})\nWeb UI: ${server.uiUrl}${evaluations ? `\nevaluations: ${evaluations}` : ''}`,
        );
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
      },
    );
}

/** An in-process worker with this host's orphan reaper; `stop` drains it (running harbors get its grace). */
async function startWorker(
  address: string,
  opts: { taskQueue: string; maxConcurrentTasks?: number; shutdownGraceTime?: string },
): Promise<{ stop(): Promise<void> }> {
  const { worker, connection, deployment } = await createVeroWorker({ address, namespace: TEMPORAL_DEFAULTS.namespace, ...opts });
  const running = worker.run();
  const reaper = await hostReaper(address, deployment);
  return {
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await reaper.stop();
      await connection.close();
    },
  };
}

interface DemoFlags {
  home?: string;
  keep?: boolean;
  json?: boolean;
  real?: boolean;
  optimize?: boolean;
  mode?: string;
}

function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('end to end on the example: dev server, worker, two candidates evaluated with the Harbor stand-in (or --real Harbor)')
    .option('--home <dir>', 'where the demo keeps its state (default ~/.vero/demo, demo-real with --real, demo-optimize; $VERO_HOME)')
    .option('--real', 'real Harbor 0.25 on Docker (examples/vero.real.yaml; run scripts/ensure-docker first)')
    .option(
      '--optimize',
      'the compiler instead: build the Mode A and Mode B example tasks and run each on real Harbor + Docker with the oracle (baseline) and the example optimizer; prints both rewards and the candidate table (exit 1 unless optimized > baseline)',
    )
    .option('--mode <a|b>', 'with --optimize: only this example (default both)')
    .option('--keep', 'keep the server and worker running afterwards (Ctrl-C stops them)')
    .option('--json', 'print the two results as JSON')
    .action(runDemo);
}

/** The README's main job: two candidates of the example agent evaluated on a dev server of the demo's own. */
async function runDemo(o: DemoFlags): Promise<void> {
  if (o.optimize) {
    installCliRuntimeLogger();
    const { demoOptimize, DEMO_MODES } = require('./demo-optimize') as typeof import('./demo-optimize');
    if (o.mode !== undefined && !(o.mode in DEMO_MODES)) throw new ConfigError(`--mode: expected a or b, got "${o.mode}"`);
    const modes = o.mode ? [o.mode as keyof typeof DEMO_MODES] : (['a', 'b'] as const).slice();
    return demoOptimize({ home: path.resolve(o.home ?? path.join(defaultHome(), 'demo-optimize')), modes, json: o.json });
  }
  // Ctrl-C stops the demo's server and worker and exits (130; 0 once it is only kept up by --keep); a second one
  // kills them at once.
  installCliRuntimeLogger({ ownSignals: true });
  let kept = false;
  const interrupts = handleInterrupts(() => (kept ? 0 : 130));
  // The demo's state goes to the user's home dir, never into the package (a global install is read-only).
  const home = path.resolve(o.home ?? path.join(defaultHome(), o.real ? 'demo-real' : 'demo'));
  const configFile = path.join(PROJECT_ROOT, 'examples', o.real ? 'vero.real.yaml' : 'vero.yaml');
  const harborCommand = o.real ? ensureHarbor(HARBOR_VERSION) : undefined;
  fs.mkdirSync(home, { recursive: true });
  const repo = path.join(home, 'agent-repo');
  makeAgentRepo(repo);
  const server = await interrupts.start(
    (onKill) =>
      startDevServer({
        temporalCli: findTemporalCli(),
        ui: true,
        dbFile: homePaths(home).temporalDb,
        logFile: path.join(home, 'temporal.log'),
        onSpawn: (pid) => onKill(killGroup(pid)),
      }),
    (s) => s.stop(),
  );
  const taskQueue = 'vero-demo';
  await interrupts.start(
    () => startWorker(server.address, { taskQueue, shutdownGraceTime: '5s' }),
    (w) => w.stop(),
  );
  try {
    process.stderr.write(`Temporal dev server ${server.address}, Web UI ${server.uiUrl}\n`);
    const results: CandidateResult[] = [];
    const client = await connect(server.address, TEMPORAL_DEFAULTS.namespace);
    for (const candidate of ['baseline', 'improved']) {
      const cfg = loadEvalConfig(configFile, {
        ...(harborCommand ? { 'harbor.command': [harborCommand] } : {}),
        agent_repo: repo,
        home,
        'temporal.address': server.address,
        'temporal.task_queue': taskQueue,
      });
      const r = await evaluateDemoCandidate(client, cfg, candidate);
      results.push(r);
      if (!o.json)
        print(
          `\n== ${candidate} ==\n${taskTable(r.tasks ?? [])}\n\n${resultSummary(r)}\nWeb UI    ${uiLink(server.uiUrl, TEMPORAL_DEFAULTS.namespace, r.evalId)}`,
        );
    }
    const best = pickBest(results)!;
    if (o.json) print(JSON.stringify({ results, best: best.evalId, ui: server.uiUrl }, null, 2));
    else
      print(
        `\nbest: ${best.candidateRef} (${best.candidate.slice(0, 12)}) with ${best.score.toFixed(3)}\nWeb UI: ${server.uiUrl}${o.keep ? '' : LINKS_DIE}`,
      );
    if (o.keep) {
      process.stderr.write('server and worker keep running; Ctrl-C stops them\n');
      kept = true;
      await new Promise(() => undefined);
    }
  } finally {
    if (!o.keep) await interrupts.stopAll();
  }
}

async function evaluateDemoCandidate(client: Client, cfg: EvalConfig, candidate: string): Promise<CandidateResult> {
  const input = await prepareEvalInput(cfg, candidate);
  const { handle, mode } = await startOrAttach(client, input, cfg.temporal.task_queue);
  process.stderr.write(`${mode} ${input.evalId} (candidate ${candidate})\n`);
  return withTasks((await handle.result()) as CandidateResult);
}
