/**
 * Scale: one evaluation of N tasks on one machine. Reports wall time, peak RSS of the worker (this process),
 * the Temporal database size, history events and bytes per execution (parent, and the largest chunk), and how
 * long `vero list` and `vero results` take at that size.
 *
 *   npm run build && node dist/bench/scale.js [--tasks 5000] [--concurrency 8] [--runner standin|synthetic]
 *     [--chunk-size 500] [--chunks-per-run N]
 *
 * `--runner standin` (default) runs one zero-delay stand-in harbor per task. `--runner synthetic` replaces only
 * the runTask activity by one that returns a row of the same shape and size at once (no process): the workflows,
 * the lane grants, the chunk files, finalize and the CLI are the real ones, so it measures what Temporal holds at
 * task counts (100k) whose harbor processes would take hours on this machine.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect } from '../client/connection';
import { prepareEvalInput } from '../client/eval-input';
import { startOrAttach } from '../client/eval-start';
import { startDevServer } from '../infra/dev-server';
import { loadEvalConfig } from '../infra/eval-config-file';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { findTemporalCli } from '../infra/temporal-cli';
import { PROJECT_ROOT } from '../infra/package-root';
import { benchWorkspace, numberArg, stringArg } from './fixtures';
import { createVeroWorker, installCliRuntimeLogger } from '../worker/create-worker';
import { NativeConnection, Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { createActivities } from '../activities';
import { deploymentOf } from '../infra/deployment';
import { chunksPerRun } from '../model/evaluation/history-bounds';
import type { RunTaskInput } from '../model/evaluation/activity-payloads';
import type { TaskResult } from '../model/evaluation/task-result';
import { runPaths } from '../model/paths';

/** A row like a real one of the stand-in (same fields, names and size), returned without running anything. */
async function syntheticRunTask(input: RunTaskInput): Promise<TaskResult> {
  const trial = `${input.task}__${input.task.slice(-7)}`;
  return {
    task: input.task,
    status: 'scored',
    score: 1,
    metrics: {},
    trial,
    taskName: input.task,
    nTrials: 1,
    runs: 1,
    exceptions: [],
    timedOut: false,
    jobDir: `${runPaths(input.runDir).jobsDir}/${input.task}`,
    error: null,
    usage: { costUsd: 0.0123, inputTokens: 1234, outputTokens: 567, cacheTokens: 0 },
    trialRewards: [1],
    harborVersion: '0.2.0+standin',
  };
}

/** A worker whose runTask is syntheticRunTask; everything else as createVeroWorker makes it. */
async function syntheticWorker(
  address: string,
  taskQueue: string,
  slots: number,
): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address });
  const deployment = await deploymentOf(connection.workflowService, 'default', taskQueue);
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowsPath: require.resolve('../workflows'),
    activities: { ...createActivities(deployment), runTask: syntheticRunTask },
    maxConcurrentActivityTaskExecutions: slots,
  });
  return { worker, connection };
}

/** Events and encoded bytes of one workflow's history. */
async function historySize(client: Client, id: string, runId?: string): Promise<{ events: number; bytes: number; byType: string }> {
  const history = await client.workflow.getHandle(id, runId).fetchHistory();
  const counts = new Map<string, { n: number; bytes: number }>();
  for (const e of history.events ?? []) {
    const type = temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType);
    const c = counts.get(type) ?? { n: 0, bytes: 0 };
    counts.set(type, { n: c.n + 1, bytes: c.bytes + temporal.api.history.v1.HistoryEvent.encode(e).finish().length });
  }
  const byType = [...counts]
    .sort((a, b) => b[1].bytes - a[1].bytes)
    .map(([t, c]) => `${t.replace(/^EVENT_TYPE_/, '').toLowerCase()} ${c.n} (${(c.bytes / 1024).toFixed(0)} KiB)`)
    .join(', ');
  return { events: history.events?.length ?? 0, bytes: temporal.api.history.v1.History.encode(history).finish().length, byType };
}

async function main(): Promise<void> {
  installCliRuntimeLogger();
  const nTasks = numberArg('--tasks', 5000);
  const concurrency = numberArg('--concurrency', 8);
  const runner = stringArg('--runner', 'standin');
  const chunkSize = numberArg('--chunk-size', 500);
  const perRunArg = numberArg('--chunks-per-run', 0);
  if (runner !== 'standin' && runner !== 'synthetic') throw new Error('--runner: standin or synthetic');
  const { tmp, dataset, repo } = benchWorkspace('vero-scale-', nTasks, runner === 'synthetic');
  const db = path.join(tmp, 'temporal.db');
  const server = await startDevServer({ temporalCli: findTemporalCli(), dbFile: db });
  const taskQueue = 'scale';
  const { worker, connection } =
    runner === 'synthetic'
      ? await syntheticWorker(server.address, taskQueue, concurrency)
      : await createVeroWorker({ address: server.address, namespace: 'default', taskQueue, maxConcurrentTasks: concurrency });
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 500);
  try {
    await worker.runUntil(async () => {
      const client = await connect(server.address, 'default');
      const cfg = loadEvalConfig(null, {
        agent_repo: repo,
        home: path.join(tmp, 'home'),
        'tasks.source.path': dataset,
        'harbor.command': [path.join(PROJECT_ROOT, 'harbor-standin/harbor')],
        'harbor.agent': 'agent:SkillAgent',
        'harbor.env': { HARBOR_STANDIN_TIME_SCALE: '0' },
        'execution.concurrency': concurrency,
        'execution.chunk_size': chunkSize,
        ...(perRunArg > 0 ? { 'execution.chunks_per_run': perRunArg } : {}),
        'temporal.address': server.address,
        'temporal.task_queue': taskQueue,
      });
      const input = await prepareEvalInput(cfg, 'improved');
      const t = performance.now();
      const { handle } = await startOrAttach(client, input, taskQueue, true);
      const r = (await handle.result()) as CandidateResult;
      const wall = performance.now() - t;
      // Every run of the parent (it continues as new every chunksPerRun chunks): the largest one.
      const runs: { events: number; bytes: number; byType: string }[] = [];
      for await (const w of client.workflow.list({ query: `WorkflowId = '${input.evalId}'` }))
        runs.push(await historySize(client, input.evalId, w.runId));
      const parentRuns = runs.length;
      const parent = runs.sort((a, b) => b.events - a.events)[0]!;
      const nChunks = Math.ceil(nTasks / input.settings.chunkSize);
      const chunks: { events: number; bytes: number; byType: string }[] = [];
      for (let i = 0; i < nChunks; i++) chunks.push(await historySize(client, `${input.evalId}/chunk-${i}`));
      const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
      const cli = (args: string[]) => {
        const s = performance.now();
        const p = spawnSync(path.join(PROJECT_ROOT, 'bin/vero'), [...args, '--address', server.address], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        if (p.status !== 0) throw new Error(`vero ${args.join(' ')}: ${p.stderr}`);
        return performance.now() - s;
      };
      const listMs = cli(['list', '--json', '--all']);
      const resultsMs = cli(['results', input.evalId, '--json']);
      process.stdout.write(
        [
          `tasks ${nTasks} (scored ${r.nScored}, errors ${r.nErrors}), runner ${runner}, concurrency ${concurrency}, cores ${os.cpus().length}`,
          `wall ${(wall / 1000).toFixed(1)} s (${(wall / nTasks).toFixed(1)} ms per task)`,
          `chunks ${nChunks} of ${input.settings.chunkSize} tasks; workflow runs of the parent ${parentRuns} (${chunksPerRun(concurrency, input.settings.chunksPerRun)} chunks per run)`,
          `history: largest run of the parent ${parent.events} events, ${kib(parent.bytes)}: ${parent.byType}`,
          `history: largest chunk ${Math.max(...chunks.map((c) => c.events))} events, ${kib(Math.max(...chunks.map((c) => c.bytes)))}`,
          `peak worker RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB; Temporal DB ${(fs.statSync(db).size / 2 ** 20).toFixed(1)} MiB`,
          `result payload ${r.tasks ? 'inline' : `by file (${(fs.statSync(r.resultFile).size / 2 ** 20).toFixed(1)} MiB)`}`,
          `vero list --json ${(listMs / 1000).toFixed(2)} s; vero results --json ${(resultsMs / 1000).toFixed(2)} s`,
          '',
        ].join('\n'),
      );
    });
  } finally {
    clearInterval(sampler);
    await connection.close();
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
