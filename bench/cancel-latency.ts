/**
 * Cancel latency: from the cancel request (what `vero cancel` sends) to every harbor process of the evaluation
 * stopped, and to the evaluation closing CANCELLED, on `vero dev` with the stand-in (tasks that would run for a
 * minute, stopped at once on SIGTERM; real Harbor adds its own Docker teardown). Three shapes: concurrency 3; a
 * concurrency raised from 1 to 3 (`vero set-concurrency`); concurrency 3 over chunks of 1 (lanes granted across
 * chunks). `--load N` runs N busy processes meanwhile (a loaded machine).
 *
 *   npm run build && node dist/bench/cancel-latency.js [--rounds 1] [--load 0]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connect } from '../client/connection';
import { getProgress, setConcurrency } from '../client/running-eval';
import { prepareEvalInput } from '../client/eval-input';
import { startOrAttach } from '../client/eval-start';
import { loadEvalConfig } from '../infra/eval-config-file';
import { PROJECT_ROOT } from '../infra/package-root';
import { benchWorkspace, median, numberArg, startVeroDev } from './fixtures';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids of the harbor runs the stand-in logged as started. */
function startedPids(log: string): number[] {
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; pid: number; argv: string[] })
    .filter((i) => i.event === 'start' && !i.argv.includes('--dry-run'))
    .map((i) => i.pid);
}

async function until(ok: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) return false;
    await sleep(50);
  }
  return true;
}

interface Shape {
  name: string;
  concurrency: number;
  chunkSize?: number;
  raiseTo?: number;
}

const SHAPES: Shape[] = [
  { name: 'concurrency 3', concurrency: 3 },
  { name: 'raised 1 → 3', concurrency: 1, raiseTo: 3 },
  { name: 'concurrency 3, chunks of 1', concurrency: 3, chunkSize: 1 },
];

async function main(): Promise<void> {
  const rounds = numberArg('--rounds', 1);
  const load = numberArg('--load', 0);
  const { tmp, dataset, repo } = benchWorkspace('vero-cancel-', 6);
  const dev = await startVeroDev(tmp, 8);
  const burners: ChildProcess[] = [];
  const figures: Record<string, { stopped: number[]; closed: number[] }> = {};
  try {
    const client = await connect(dev.address, 'default');
    for (let i = 0; i < load; i++) burners.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
    for (let round = 0; round < rounds; round++) {
      for (const shape of SHAPES) {
        const log = path.join(tmp, `invocations-${round}-${shape.concurrency}-${shape.chunkSize ?? 0}.jsonl`);
        const cfg = loadEvalConfig(null, {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.source.path': dataset,
          'harbor.command': [path.join(PROJECT_ROOT, 'harbor-standin/harbor')],
          'harbor.agent': 'agent:SkillAgent',
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_LOG: log,
            HARBOR_STANDIN_SCENARIO: JSON.stringify({ default: { reward: 1, duration_ms: 60_000 } }),
          },
          'execution.concurrency': shape.concurrency,
          ...(shape.chunkSize ? { 'execution.chunk_size': shape.chunkSize } : {}),
          // A distinct evaluation per round (the id is the digest of the settings).
          'execution.task_timeout': 600 + round,
          'temporal.address': dev.address,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, cfg.temporal.task_queue, true);
        if (!(await until(() => startedPids(log).length >= 1, 120_000)))
          throw new Error(`${shape.name}: no harbor started within 120 s (${(await handle.describe()).status.name})`);
        if (shape.raiseTo) {
          await until(async () => (await getProgress(client, input.evalId).catch(() => null))?.running === 1, 60_000);
          await setConcurrency(client, input.evalId, shape.raiseTo);
        }
        if (!(await until(() => startedPids(log).length >= 3, 120_000))) throw new Error(`${shape.name}: three harbors did not start`);
        await sleep(6_000); // the harbors' first heartbeats are behind them: a cancel waits for a later one
        const pids = startedPids(log);
        const t0 = Date.now();
        await handle.cancel();
        let closedAt = 0;
        let runningAtClose = 0;
        const closed = handle.result().catch(() => {
          closedAt = Date.now();
          runningAtClose = pids.filter(alive).length;
        });
        const stoppedOk = await until(() => !pids.some(alive), 120_000);
        const stoppedMs = Date.now() - t0;
        await closed;
        const closedMs = closedAt - t0;
        (figures[shape.name] ??= { stopped: [], closed: [] }).stopped.push(stoppedMs);
        figures[shape.name]!.closed.push(closedMs);
        process.stdout.write(
          `${shape.name} (round ${round + 1}): ${pids.length} harbor(s) stopped ${stoppedOk ? `${stoppedMs} ms` : 'NOT within 120 s'} after the cancel; CANCELLED after ${closedMs} ms` +
            `${runningAtClose ? ` with ${runningAtClose} harbor(s) still running` : ', none running'}\n`,
        );
      }
    }
    process.stdout.write(
      `\ncancel latency, median over ${rounds} round(s), ${load} busy process(es) beside: ` +
        Object.entries(figures)
          .map(([name, f]) => `${name}: harbors stopped ${median(f.stopped)} ms, CANCELLED ${median(f.closed)} ms`)
          .join('; ') +
        '\n',
    );
  } finally {
    for (const b of burners) b.kill('SIGKILL');
    await dev.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
