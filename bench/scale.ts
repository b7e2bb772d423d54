/**
 * Scale: one evaluation of N tasks (zero-delay stand-in) on one machine. Reports wall time, peak RSS of the
 * worker (this process), the Temporal database size, history events per execution, and how long `vero list`
 * and `vero results` take at that size.
 *
 *   npm run build && node dist/bench/scale.js [--tasks 5000] [--concurrency 8]
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, prepareEvalInput, startOrAttach } from '../client/eval-client';
import { startDevServer } from '../infra/dev-server';
import { loadEvalConfig } from '../infra/eval-config-file';
import type { CandidateResult } from '../model/eval-types';
import { findTemporalCli, PROJECT_ROOT } from '../infra/temporal-cli';
import { benchWorkspace, numberArg } from './fixtures';
import { createVeroWorker, installCliRuntimeLogger } from '../worker/create-worker';

async function main(): Promise<void> {
  installCliRuntimeLogger();
  const nTasks = numberArg('--tasks', 5000);
  const concurrency = numberArg('--concurrency', 8);
  const { tmp, dataset, repo } = benchWorkspace('vero-scale-', nTasks);
  const db = path.join(tmp, 'temporal.db');
  const server = await startDevServer({ temporalCli: findTemporalCli(), dbFile: db });
  const taskQueue = 'scale';
  const { worker, connection } = await createVeroWorker({
    address: server.address,
    namespace: 'default',
    taskQueue,
    maxConcurrentTasks: concurrency,
  });
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
        'temporal.address': server.address,
        'temporal.task_queue': taskQueue,
      });
      const input = await prepareEvalInput(cfg, 'improved');
      const t = performance.now();
      const { handle } = await startOrAttach(client, input, taskQueue, true);
      const r = (await handle.result()) as CandidateResult;
      const wall = performance.now() - t;
      const events = async (id: string) => (await client.workflow.getHandle(id).fetchHistory()).events?.length ?? 0;
      const parentEvents = await events(input.evalId);
      const chunkEvents: number[] = [];
      for (let i = 0; i < Math.ceil(nTasks / 500); i++) chunkEvents.push(await events(`${input.evalId}/chunk-${i}`));
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
          `tasks ${nTasks} (scored ${r.nScored}, errors ${r.nErrors}), concurrency ${concurrency}, cores ${os.cpus().length}`,
          `wall ${(wall / 1000).toFixed(1)} s (${(wall / nTasks).toFixed(0)} ms per task)`,
          `history events: parent ${parentEvents}; chunks max ${Math.max(...chunkEvents)} (of ${chunkEvents.length})`,
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
