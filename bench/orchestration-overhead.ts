/**
 * Orchestration overhead: one evaluation of N tasks at concurrency C, against the same harbor invocations
 * run by `xargs -P C`, side by side in one run. Task durations (Harbor stand-in, real sleeps):
 *   --durations zero             every task instant (the scheduling floor)
 *   --durations slow-per-chunk   one 20 s task per chunk, the rest 0.1 s (chunks as barriers show here)
 *   --durations pareto           heavy-tailed: Pareto(α = 1.2, x_min = 0.2 s), capped at 30 s, seeded
 *   --durations fixed-MS         every task MS ms (e.g. fixed-15000 keeps every lane busy: memory at full concurrency)
 *
 *   npm run bench -- [--tasks 200] [--concurrency 8] [--rounds 2] [--chunk-size 500] [--durations zero] [--worker dev]
 *                    [--dev-slots N]   (vero dev's --max-concurrent-tasks; default: the README's, by memory)
 *                    [--db-sync normal|full]   (vero dev's --db-sync; default: its own)
 *                    [--profile-worker]   (a CPU profile of vero dev's main thread, summed at the end)
 *
 * --worker dev runs the evaluations on `vero dev` exactly as the README starts it (its default worker slots,
 * its own dev server on a free port and a temp SQLite file), not on an in-process worker sized for the bench.
 * After the rounds it prints, from the first round's histories, where each lane handed across chunks spent its
 * time and the fixed costs around the fan-out (handoff-latency.ts).
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
import { harborArgv } from '../model/harbor/argv';
import { findTemporalCli } from '../infra/temporal-cli';
import { PROJECT_ROOT } from '../infra/package-root';
import { createVeroWorker, installCliRuntimeLogger } from '../worker/create-worker';
import { benchWorkspace, median, numberArg, startVeroDev, stringArg } from './fixtures';
import { handoffLatency, laneTurnaround } from './handoff-latency';
import { cpuBreakdown, treeCpu, treeCpuSec } from './tree-cpu';
import { profileSummary } from './cpu-profile-summary';
import { memoryText, sampleTreeMemory } from './tree-memory';

async function main(): Promise<void> {
  installCliRuntimeLogger();
  const nTasks = numberArg('--tasks', 200);
  const concurrency = numberArg('--concurrency', 8);
  const rounds = numberArg('--rounds', 2);
  const chunkSize = numberArg('--chunk-size', 500);
  const durations = stringArg('--durations', 'zero');
  const { tmp, dataset, tasks, repo } = benchWorkspace('vero-bench-', nTasks);
  const standin = path.join(PROJECT_ROOT, 'harbor-standin', 'harbor');
  const durationOf = taskDurations(tasks, durations, chunkSize);
  const env: Record<string, string> =
    durations === 'zero'
      ? { HARBOR_STANDIN_TIME_SCALE: '0' }
      : {
          HARBOR_STANDIN_TIME_SCALE: '1',
          HARBOR_STANDIN_SCENARIO: JSON.stringify({
            tasks: Object.fromEntries(tasks.map((t) => [t, { reward: 1, duration_ms: durationOf[t] }])),
          }),
        };
  const workerKind = stringArg('--worker', 'bench');
  if (!['bench', 'dev'].includes(workerKind)) throw new Error(`--worker ${workerKind}: expected bench or dev`);
  const devSlots = numberArg('--dev-slots', 0); // vero dev --max-concurrent-tasks (0: its default)
  const dbSync = stringArg('--db-sync', ''); // vero dev --db-sync (empty: its default)
  const profileWorker = process.argv.includes('--profile-worker');
  const profileDir = profileWorker ? fs.mkdtempSync(path.join(os.tmpdir(), 'vero-bench-profile-')) : undefined;
  const dev =
    workerKind === 'dev'
      ? await startVeroDev(tmp, devSlots || undefined, {
          flags: dbSync ? ['--db-sync', dbSync] : [],
          ...(profileDir ? { profileDir } : {}),
        })
      : null;
  const server = dev ? null : await startDevServer({ temporalCli: findTemporalCli() });
  const address = dev?.address ?? server!.address;
  const taskQueue = dev ? 'vero-harbor' : 'bench';
  const inProcess = dev ? null : await createVeroWorker({ address, namespace: 'default', taskQueue, maxConcurrentTasks: concurrency });
  const invocationLog = (side: 'vero' | 'xargs', round: number) => path.join(tmp, `${side}-invocations-${round}.jsonl`);
  const runUntil = <T>(f: () => Promise<T>): Promise<T> => (inProcess ? inProcess.worker.runUntil(f) : f());
  const rows: { round: number; vero: number; xargs: number }[] = [];
  try {
    await runUntil(async () => {
      const client = await connect(address, 'default');
      for (let round = 1; round <= rounds; round++) {
        const home = path.join(tmp, `home-${round}`);
        const cfg = loadEvalConfig(null, {
          agent_repo: repo,
          home,
          'tasks.source.path': dataset,
          'harbor.command': [standin],
          'harbor.agent': 'agent:SkillAgent',
          'harbor.env': { ...env, HARBOR_STANDIN_LOG: invocationLog('vero', round) },
          'execution.concurrency': concurrency,
          'execution.chunk_size': chunkSize,
          'temporal.address': address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const memory = sampleTreeMemory(dev?.pid ?? process.pid);
        const cpu0 = treeCpu(dev?.pid ?? process.pid);
        const t0 = performance.now();
        const { handle } = await startOrAttach(client, input, taskQueue, true);
        const result = (await handle.result()) as CandidateResult;
        const veroMs = performance.now() - t0;
        const veroMemory = memory.stop();
        const cpu1 = treeCpu(dev?.pid ?? process.pid);
        if (result.nScored !== nTasks) throw new Error(`expected ${nTasks} scored tasks, got ${result.nScored}`);

        // The same invocations, minus Temporal: one harbor run per task under xargs -P.
        const worktree = path.join(home, 'worktrees', input.candidate);
        const jobs = path.join(tmp, `xargs-jobs-${round}`);
        const lines = tasks.map((t) =>
          harborArgv({ harbor: cfg.harbor, source: cfg.tasks.source, task: t, jobsDir: jobs, jobName: t, worktree }),
        );
        const script = path.join(tmp, `xargs-${round}.txt`);
        fs.writeFileSync(script, lines.map((l) => l.map((a) => `'${a}'`).join(' ')).join('\n'));
        const t1 = performance.now();
        const r = spawnSync('bash', ['-c', `xargs -P ${concurrency} -L 1 env < '${script}' > /dev/null 2>&1; s=$?; times; exit $s`], {
          cwd: worktree,
          // As vero runs harbor: the agent imports from the checkout.
          env: { ...process.env, ...env, HARBOR_STANDIN_LOG: invocationLog('xargs', round), PYTHONPATH: worktree },
        });
        const xargsMs = performance.now() - t1;
        if (r.status !== 0) throw new Error(`xargs run failed (${r.status})`);
        const xargsCpu = childrenCpuSec(r.stdout.toString());
        const produced = fs.readdirSync(jobs).filter((j) => fs.statSync(path.join(jobs, j)).isDirectory()).length;
        if (produced !== nTasks) throw new Error(`xargs produced ${produced} jobs, expected ${nTasks}`);
        rows.push({ round, vero: veroMs, xargs: xargsMs });
        const gaps = (side: 'vero' | 'xargs') => median(turnaroundGaps(invocationLog(side, round), concurrency)).toFixed(0);
        process.stdout.write(
          `round ${round}: vero ${(veroMs / 1000).toFixed(2)} s, xargs ${(xargsMs / 1000).toFixed(2)} s, ratio ${(veroMs / xargsMs).toFixed(2)}\n` +
            `  memory of ${dev ? 'vero dev' : 'this process (its worker)'}: ${memoryText(veroMemory)}\n` +
            `  a harbor run's end → the start of the run it frees a lane for (stand-in start-up included): median vero ${gaps('vero')} ms, xargs ${gaps('xargs')} ms\n` +
            `  CPU: xargs side ${xargsCpu.toFixed(1)} s; vero ${(treeCpuSec(cpu1) - treeCpuSec(cpu0)).toFixed(1)} s (${cpuBreakdown(cpu0, cpu1)})${dev ? '' : ' (this process: bench and worker)'}\n`,
        );
      }
      // `execution` is not part of the evaluation id: the first round's id, from the same config without it.
      const evalId = (
        await prepareEvalInput(
          loadEvalConfig(null, {
            agent_repo: repo,
            'tasks.source.path': dataset,
            'harbor.command': [standin],
            'harbor.agent': 'agent:SkillAgent',
            'harbor.env': { ...env, HARBOR_STANDIN_LOG: invocationLog('vero', 1) },
            home: path.join(tmp, 'home-1'),
          }),
          'improved',
        )
      ).evalId;
      const parent = await client.workflow.getHandle(evalId).fetchHistory();
      const chunk = await client.workflow.getHandle(`${evalId}/chunk-0`).fetchHistory();
      process.stdout.write(
        `history events: parent ${parent.events?.length}, first chunk (${Math.min(nTasks, chunkSize)} tasks) ${chunk.events?.length}\n` +
          `${await handoffLatency(client, evalId, Math.ceil(nTasks / chunkSize))} (round 1)\n` +
          `${await laneTurnaround(client, evalId, Math.ceil(nTasks / chunkSize))} (round 1)\n`,
      );
    });
  } finally {
    await inProcess?.connection.close();
    await server?.stop();
    await dev?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  if (profileDir) {
    for (const f of fs.readdirSync(profileDir))
      process.stdout.write(
        `CPU profile of vero dev (all rounds), ${path.join(profileDir, f)}:\n${profileSummary(path.join(profileDir, f))}\n`,
      );
  }
  const best = rows.reduce((a, b) => (b.vero / b.xargs < a.vero / a.xargs ? b : a));
  const ratio = median(rows.map((r) => r.vero / r.xargs));
  const perTaskMs = ((median(rows.map((r) => r.vero)) - median(rows.map((r) => r.xargs))) * concurrency) / nTasks;
  process.stdout.write(
    `\nworker ${dev ? (devSlots || dbSync ? `\`vero dev${devSlots ? ` --max-concurrent-tasks ${devSlots}` : ''}${dbSync ? ` --db-sync ${dbSync}` : ''}\`` : '`vero dev` (README defaults)') : `in-process, ${concurrency} slots`}, tasks ${nTasks}, concurrency ${concurrency}, chunk size ${chunkSize}, durations ${durations} (sum ${(Object.values(durationOf).reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s), cores ${os.cpus().length}\n` +
      `median ratio vero/xargs ${ratio.toFixed(2)} (best round ${(best.vero / best.xargs).toFixed(2)}; goal ≤ 1.10)\n` +
      `orchestration overhead per task (wall × concurrency / tasks) ${perTaskMs.toFixed(0)} ms\n`,
  );
}

/**
 * What a lane waits between two harbor runs, from the stand-in's invocation log: in time order, the k-th run's end
 * frees the lane the (concurrency + k)-th run starts on (the preflight's dry run left out).
 */
function turnaroundGaps(logFile: string, concurrency: number): number[] {
  const events = fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; argv: string[]; time: string })
    .filter((e) => !e.argv.includes('--dry-run'));
  const times = (kind: string) =>
    events
      .filter((e) => e.event === kind)
      .map((e) => Date.parse(e.time))
      .sort((a, b) => a - b);
  const [starts, ends] = [times('start'), times('end')];
  return ends.slice(0, Math.max(0, starts.length - concurrency)).map((end, k) => starts[concurrency + k]! - end);
}

/** The CPU-seconds of a bash's children, from the second line `times` printed (user and system). */
function childrenCpuSec(timesOutput: string): number {
  const sec = (t: string) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t);
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  };
  const [user, system] = timesOutput.trim().split('\n').at(-1)!.split(/\s+/);
  return sec(user!) + sec(system!);
}

/** Per-task durations (ms) for a duration profile; deterministic. */
function taskDurations(tasks: string[], profile: string, chunkSize: number): Record<string, number> {
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Object.fromEntries(
    tasks.map((t, i) => {
      if (profile === 'zero') return [t, 0];
      if (/^fixed-\d+$/.test(profile)) return [t, Number(profile.slice('fixed-'.length))]; // every task this many ms
      if (profile === 'slow-per-chunk') return [t, i % chunkSize === 0 ? 20_000 : 100];
      if (profile === 'pareto') return [t, Math.round(Math.min(30_000, 200 / (1 - random()) ** (1 / 1.2)))];
      throw new Error(`--durations ${profile}: expected zero, slow-per-chunk or pareto`);
    }),
  );
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
