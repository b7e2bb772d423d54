/**
 * Worker start: `vero worker` from its spawn to its SDK's "Worker state changed … RUNNING" log line, with the
 * workflow bundle `npm run build` made against `VERO_WORKFLOW_BUNDLE=0` (webpack at start, as before), alternating,
 * on one dev server.
 *
 *   npm run build && node dist/bench/worker-start.js [--rounds 3]
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { startDevServer } from '../infra/dev-server';
import { PROJECT_ROOT } from '../infra/package-root';
import { findTemporalCli } from '../infra/temporal-cli';
import { median, numberArg } from './fixtures';

/** Seconds from spawning `vero worker` to its worker running; then it is stopped (SIGTERM) and waited for. */
async function timeWorkerStart(address: string, env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const proc = spawn(path.join(PROJECT_ROOT, 'bin', 'vero'), ['worker', '--address', address, '--task-queue', 'bench-worker-start'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, VERO_LOG_LEVEL: 'INFO', ...env },
  });
  const exited = new Promise<number | null>((r) => proc.on('exit', r));
  let log = '';
  const running = new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer) => {
      log += d.toString();
      if (/state: 'RUNNING'/.test(log)) resolve((performance.now() - t0) / 1000);
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`vero worker exited (${code}) before running: ${log.slice(-2000)}`)));
  });
  try {
    return await running;
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

async function main(): Promise<void> {
  const rounds = numberArg('--rounds', 3);
  const server = await startDevServer({ temporalCli: findTemporalCli() });
  const rows: { prebuilt: number; bundling: number }[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const prebuilt = await timeWorkerStart(server.address, {});
      const bundling = await timeWorkerStart(server.address, { VERO_WORKFLOW_BUNDLE: '0' });
      rows.push({ prebuilt, bundling });
      process.stdout.write(`round ${round}: prebuilt bundle ${prebuilt.toFixed(2)} s, bundling at start ${bundling.toFixed(2)} s\n`);
    }
  } finally {
    await server.stop();
  }
  const p = median(rows.map((r) => r.prebuilt));
  const b = median(rows.map((r) => r.bundling));
  process.stdout.write(`\nmedian: prebuilt ${p.toFixed(2)} s, bundling at start ${b.toFixed(2)} s (${(b / p).toFixed(1)}× longer)\n`);
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
