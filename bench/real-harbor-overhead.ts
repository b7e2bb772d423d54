/**
 * Real Harbor: the same dataset through one plain `harbor run -n C` and through
 * `vero start-eval` at concurrency C on `vero dev` as the README starts it, alternating, side by side. Prints
 * the wall-time ratio and the CPU-seconds each side used, harbor processes included (Docker's own daemons,
 * which both sides drive the same way, are not counted), and the difference per task.
 *
 *   npm run build && [VERO_HARBOR_VERSION=0.25.0] node dist/bench/real-harbor-overhead.js [--tasks 16] [--concurrency 4] [--rounds 2] [--fixed-sec 2] [--teardown-concurrency N] [--timeline] [--litellm-local-cost-map]
 *
 * Tasks: the offline base image (no build), the oracle agent, a solve.sh that sleeps a heavy-tailed 1–25 s
 * (seeded; `--fixed-sec N`: N s each, the short-task variant), a verifier that writes reward 1. Also prints the
 * floor (the agents' work perfectly scheduled on C lanes) and Harbor's phase timings summed per phase, each side's
 * (bench/real-harbor-phases.ts): vero's lanes start the next task during Harbor's teardown, plain Harbor's `-n`
 * slots do not. `--timeline`: each round's lane timeline (bench/lane-timeline.ts). Needs scripts/ensure-docker and scripts/ensure-harbor.
 *
 * vero dev runs with the harbor's dir first on its PATH, so the fork server its worker warms as it starts (for the
 * default `harbor`: worker/harbor-warm-up.ts) is the one the evaluations fork from; timing starts once that server
 * says it has imported Harbor, so its import takes no CPU from either side's run.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect } from '../client/connection';
import { prepareEvalInput } from '../client/eval-input';
import { startOrAttach } from '../client/eval-start';
import { loadEvalConfig } from '../infra/eval-config-file';
import { PROJECT_ROOT } from '../infra/package-root';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { installCliRuntimeLogger } from '../worker/create-worker';
import { makeAgentRepo, median, numberArg, startVeroDev } from './fixtures';
import { memoryText, sampleTreeMemory, type TreeMemory } from './tree-memory';
import { cpuBreakdown, treeCpu, treeCpuSec } from './tree-cpu';
import { floorSec, phaseSums, phaseText } from './real-harbor-phases';
import { evaluationTimeline, timelineText } from './lane-timeline';
import { forkServerRecordAt, forkServerSocketsOf, type ForkServerRecord } from '../harbor/forkserver';

const IMAGE = 'vero-base:bookworm';

/**
 * `--litellm-local-cost-map`: both sides run with LiteLLM's bundled model cost map. Without it, on a host without
 * internet access, each process that imports LiteLLM (the worker's harbor fork server, once; a plain `harbor run` of
 * the oracle agent never does) may wait between its failed fetches of the remote map.
 */
const LOCAL_COST_MAP = { LITELLM_LOCAL_MODEL_COST_MAP: 'True' };

/** N tasks whose oracle sleeps a heavy-tailed duration (or `fixedSec` each); returns the durations (s). */
function writeDataset(dir: string, n: number, fixedSec: number): number[] {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const durations: number[] = [];
  for (let i = 0; i < n; i++) {
    const sec = fixedSec > 0 ? fixedSec : Math.round(Math.min(25, 1 / (1 - random()) ** (1 / 1.1)));
    durations.push(sec);
    const task = path.join(dir, `sleep-${String(i).padStart(2, '0')}`);
    fs.mkdirSync(path.join(task, 'solution'), { recursive: true });
    fs.mkdirSync(path.join(task, 'tests'), { recursive: true });
    fs.writeFileSync(
      path.join(task, 'task.toml'),
      `[agent]\ntimeout_sec = 120.0\n\n[verifier]\ntimeout_sec = 60.0\n\n[environment]\ndocker_image = "${IMAGE}"\n`,
    );
    fs.writeFileSync(path.join(task, 'instruction.md'), `Sleep ${sec} seconds.\n`);
    fs.writeFileSync(path.join(task, 'solution', 'solve.sh'), `#!/bin/bash\nsleep ${sec}\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(task, 'tests', 'test.sh'), '#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n', { mode: 0o755 });
  }
  return durations;
}

/** One plain `harbor run -p DS -n C`: wall and CPU seconds (bash's `times` for its children), and its memory. */
async function plainHarbor(
  harbor: string,
  dataset: string,
  jobs: string,
  concurrency: number,
  env: Record<string, string>,
): Promise<{ wallSec: number; cpuSec: number; memory: TreeMemory }> {
  const t0 = performance.now();
  const cmd = `'${harbor}' run -p '${dataset}' -a oracle -n ${concurrency} -o '${jobs}' --job-name plain -y -q > /dev/null 2>&1; s=$?; times; exit $s`;
  const child = spawn('bash', ['-c', cmd], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const memory = sampleTreeMemory(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const status = await new Promise<number | null>((r) => child.on('close', r));
  const wallSec = (performance.now() - t0) / 1000;
  const peak = memory.stop();
  if (status !== 0) throw new Error(`harbor run failed (${status}): ${stderr}`);
  const children = stdout.trim().split('\n')[1]!.split(/\s+/);
  const sec = (t: string) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t)!;
    return Number(m[1]) * 60 + Number(m[2]);
  };
  return { wallSec, cpuSec: sec(children[0]!) + sec(children[1]!), memory: peak };
}

/** The record of the worker's warm fork server (pid `workerPid`), waited for; null when none is warm within a minute. */
async function warmForkServer(workerPid: number): Promise<{ sock: string; record: ForkServerRecord } | null> {
  const t0 = performance.now();
  for (let i = 0; i < 600; i++) {
    for (const sock of forkServerSocketsOf(workerPid)) {
      const record = await forkServerRecordAt(sock);
      if (record?.imported) {
        process.stdout.write(
          `fork server warm (pid ${record.pid}, Harbor imported) ${((performance.now() - t0) / 1000).toFixed(1)} s after vero dev was up; timing starts\n`,
        );
        return { sock, record };
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stdout.write('no warm fork server within 60 s (harbor is not a console script?): harbor runs are spawned\n');
  return null;
}

async function main(): Promise<void> {
  installCliRuntimeLogger();
  const nTasks = numberArg('--tasks', 16);
  const concurrency = numberArg('--concurrency', 4);
  const rounds = numberArg('--rounds', 2);
  const fixedSec = numberArg('--fixed-sec', 0);
  const teardownConcurrency = numberArg('--teardown-concurrency', -1); // -1: vero's default (2 × the concurrency)
  const localCostMap = process.argv.includes('--litellm-local-cost-map');
  const harbor = execFileSync(path.join(PROJECT_ROOT, 'scripts', 'ensure-harbor'), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const harborVersion = execFileSync(harbor, ['--version'], { encoding: 'utf8' }).trim().split('\n').at(-1);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-real-bench-'));
  const dataset = path.join(tmp, 'dataset');
  const durations = writeDataset(dataset, nTasks, fixedSec);
  const repo = makeAgentRepo(path.join(tmp, 'agent-repo'));
  const dev = await startVeroDev(tmp, undefined, { env: { PATH: `${path.dirname(harbor)}${path.delimiter}${process.env.PATH ?? ''}` } });
  const forkServer = await warmForkServer(dev.pid);
  const rows: { round: number; plain: { wallSec: number; cpuSec: number }; vero: { wallSec: number; cpuSec: number } }[] = [];
  try {
    const client = await connect(dev.address, 'default');
    for (let round = 1; round <= rounds; round++) {
      const plain = await plainHarbor(
        harbor,
        dataset,
        path.join(tmp, `plain-jobs-${round}`),
        concurrency,
        localCostMap ? LOCAL_COST_MAP : {},
      );
      const cfg = loadEvalConfig(null, {
        agent_repo: repo,
        home: path.join(tmp, `home-${round}`),
        'tasks.source.path': dataset,
        'harbor.command': [harbor],
        'harbor.agent': 'oracle',
        'execution.concurrency': concurrency,
        ...(teardownConcurrency >= 0 ? { 'execution.teardown_concurrency': teardownConcurrency } : {}),
        ...(localCostMap ? { 'harbor.env': LOCAL_COST_MAP } : {}),
        'temporal.address': dev.address,
      });
      const input = await prepareEvalInput(cfg, 'improved');
      const cpu0 = treeCpu(dev.pid);
      const memory = sampleTreeMemory(dev.pid);
      const t0 = performance.now();
      const { handle } = await startOrAttach(client, input, 'vero-harbor', true);
      const result = (await handle.result()) as CandidateResult;
      const cpu1 = treeCpu(dev.pid);
      const veroMemory = memory.stop();
      const vero = { wallSec: (performance.now() - t0) / 1000, cpuSec: treeCpuSec(cpu1) - treeCpuSec(cpu0) };
      if (result.nScored !== nTasks) throw new Error(`expected ${nTasks} scored tasks, got ${result.nScored} (${result.nErrors} errors)`);
      rows.push({ round, plain, vero });
      if (forkServer)
        process.stdout.write(
          `  fork server's record: ${JSON.stringify(await forkServerRecordAt(forkServer.sock))} (forks: every harbor of the rounds so far)\n`,
        );
      if (process.argv.includes('--timeline'))
        process.stdout.write(`${timelineText(await evaluationTimeline(client, handle.workflowId), concurrency)}\n`);
      process.stdout.write(
        `  Harbor's phases, plain: ${phaseText(phaseSums(path.join(tmp, `plain-jobs-${round}`)))}\n` +
          `  Harbor's phases, vero:  ${phaseText(phaseSums(path.join(tmp, `home-${round}`)))}\n`,
      );
      process.stdout.write(
        `round ${round}: plain harbor ${plain.wallSec.toFixed(1)} s wall, ${plain.cpuSec.toFixed(1)} CPU-s; vero ${vero.wallSec.toFixed(1)} s wall, ${vero.cpuSec.toFixed(1)} CPU-s; ratio ${(vero.wallSec / plain.wallSec).toFixed(2)}\n` +
          `  vero's CPU-s by process: ${cpuBreakdown(cpu0, cpu1)}\n` +
          `  memory: plain harbor ${memoryText(plain.memory)}; vero dev ${memoryText(veroMemory)} (root = vero dev: its worker)\n`,
      );
    }
    await client.connection.close();
  } finally {
    await dev.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const ratio = median(rows.map((r) => r.vero.wallSec / r.plain.wallSec));
  const cpuPerTask = median(rows.map((r) => (r.vero.cpuSec - r.plain.cpuSec) / nTasks));
  process.stdout.write(
    `\nreal Harbor ${harborVersion}, ${nTasks} tasks (oracle sleeps ${Math.min(...durations)}–${Math.max(...durations)} s, sum ${durations.reduce((a, b) => a + b, 0)} s), concurrency ${concurrency}, cores ${os.cpus().length}, vero dev with README defaults${teardownConcurrency >= 0 ? `, teardown_concurrency ${teardownConcurrency}` : ''}${localCostMap ? ', LiteLLM local cost map' : ''}\n` +
      `median wall ratio vero / plain harbor -n ${concurrency}: ${ratio.toFixed(2)}\n` +
      `floor (the agents' work perfectly scheduled on ${concurrency} lanes): ${floorSec(durations, concurrency).toFixed(1)} s; ` +
      `median wall plain ${median(rows.map((r) => r.plain.wallSec)).toFixed(1)} s, vero ${median(rows.map((r) => r.vero.wallSec)).toFixed(1)} s\n` +
      `CPU overhead per task (vero tree − plain harbor, harbor processes included): ${cpuPerTask.toFixed(2)} CPU-s\n`,
  );
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
