/**
 * Several workers (processes) on one task queue share the fan-out: an I/O-bound evaluation (the stand-in
 * sleeps `--delay` ms per trial) with 1 worker, then 4 workers, each limited to `--per-worker` harbor runs.
 *
 *   npm run build && node dist/bench/worker-scaling.js [--tasks 48] [--delay 1000] [--per-worker 4]
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connect } from '../client/connection';
import { prepareEvalInput } from '../client/eval-input';
import { startOrAttach } from '../client/eval-start';
import { startDevServer } from '../infra/dev-server';
import { loadEvalConfig } from '../infra/eval-config-file';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { findTemporalCli } from '../infra/temporal-cli';
import { PROJECT_ROOT } from '../infra/package-root';
import { benchWorkspace, numberArg } from './fixtures';

async function main(): Promise<void> {
  const nTasks = numberArg('--tasks', 48);
  const delay = numberArg('--delay', 1000);
  const perWorker = numberArg('--per-worker', 4);
  const { tmp, dataset, repo } = benchWorkspace('vero-scaling-', nTasks);
  const server = await startDevServer({ temporalCli: findTemporalCli() });
  const results: Record<number, number> = {};
  try {
    const client = await connect(server.address, 'default');
    for (const workers of [1, 4]) {
      const taskQueue = `scaling-${workers}`;
      const procs: ChildProcess[] = Array.from({ length: workers }, () =>
        spawn(
          path.join(PROJECT_ROOT, 'bin/vero'),
          ['worker', '--address', server.address, '--task-queue', taskQueue, '--max-concurrent-tasks', String(perWorker)],
          { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
        ),
      );
      // Time the evaluation, not worker start-up (each worker bundles the workflow code first).
      await Promise.all(
        procs.map(
          (p) =>
            new Promise<void>((resolve) => {
              let err = '';
              p.stderr!.on('data', (d: Buffer) => {
                err += d.toString();
                if (err.includes('worker polling')) resolve();
              });
            }),
        ),
      );
      try {
        const cfg = loadEvalConfig(null, {
          agent_repo: repo,
          home: path.join(tmp, `home-${workers}`),
          'tasks.source.path': dataset,
          'harbor.command': [path.join(PROJECT_ROOT, 'harbor-standin/harbor')],
          'harbor.agent': 'agent:MiniAgent',
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_SCENARIO: JSON.stringify({ default: { reward: 1, duration_ms: delay } }),
          },
          'execution.concurrency': perWorker * 4,
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const t = performance.now();
        const { handle } = await startOrAttach(client, input, taskQueue, true);
        const r = (await handle.result()) as CandidateResult;
        if (r.nScored !== nTasks) throw new Error(`expected ${nTasks} scored, got ${r.nScored}`);
        results[workers] = performance.now() - t;
        process.stdout.write(`${workers} worker(s) × ${perWorker} harbor runs: ${(results[workers]! / 1000).toFixed(1)} s\n`);
      } finally {
        for (const p of procs) process.kill(-p.pid!, 'SIGTERM');
      }
    }
  } finally {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  process.stdout.write(
    `\n${nTasks} tasks, ${delay} ms per trial: speed-up 1 → 4 workers ${(results[1]! / results[4]!).toFixed(2)}× (ideal 4×)\n`,
  );
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
