/**
 * Collation throughput: `vero trials` on a jobs dir of N trial result.json files, against
 * `find -name result.json | xargs cat > /dev/null` (the I/O floor), side by side.
 *
 *   npm run build && node dist/bench/collation-throughput.js [--trials 20000] [--threads N]
 *
 * Each round also runs `vero trials --threads 1` (one thread), for the gain of its threads: by default as many as
 * `vero trials` chooses for that many trials, or N. Each run's CPU time (all threads, all processes) is printed too.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../infra/package-root';
import { numberArg, stringArg } from './fixtures';

function main(): void {
  const n = numberArg('--trials', 20_000);
  const threads = stringArg('--threads', '');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-collate-'));
  try {
    // One real trial from the stand-in, replicated into N trials over 100 jobs (500 tasks × attempts).
    const seedJobs = path.join(tmp, 'seed');
    execFileSync(
      path.join(PROJECT_ROOT, 'harbor-standin/harbor'),
      [
        'run',
        '-p',
        path.join(PROJECT_ROOT, 'examples/datasets/mini-bench'),
        '-i',
        'hello-world',
        '-o',
        seedJobs,
        '--job-name',
        'j',
        '-y',
        '-q',
      ],
      { env: { ...process.env, HARBOR_STANDIN_TIME_SCALE: '0' } },
    );
    const seedTrial = fs.readdirSync(path.join(seedJobs, 'j')).find((d) => d.startsWith('hello-world__'))!;
    const template = JSON.parse(fs.readFileSync(path.join(seedJobs, 'j', seedTrial, 'result.json'), 'utf8')) as Record<string, unknown>;
    const jobs = path.join(tmp, 'jobs');
    const perJob = Math.ceil(n / 100);
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const job = path.join(jobs, `job-${Math.floor(i / perJob)}`);
      if (i % perJob === 0) {
        fs.mkdirSync(job, { recursive: true });
        fs.writeFileSync(path.join(job, 'config.json'), '{}');
        fs.writeFileSync(path.join(job, 'lock.json'), '{}');
      }
      const task = `task-${i % 500}`;
      const name = `${task}__${String(i).padStart(7, '2')}`;
      fs.mkdirSync(path.join(job, name));
      const body = JSON.stringify(
        {
          ...template,
          trial_name: name,
          task_name: task,
          task_id: { path: `/data/${task}` },
          verifier_result: { rewards: { reward: i % 3 === 0 ? 1 : 0 } },
        },
        null,
        4,
      );
      bytes += body.length;
      fs.writeFileSync(path.join(job, name, 'result.json'), body);
    }
    const time = (cmd: string, args: string[]) => {
      const t = performance.now();
      const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 28 });
      if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
      return { ms: performance.now() - t, stderr: r.stderr.toString() };
    };
    // bin/vero is `exec node dist/cli/main.js`: the same, with its peak RSS and CPU time reported as it exits.
    const cli = path.join(PROJECT_ROOT, 'dist', 'cli', 'main.js');
    const veroTrials = (...flags: string[]) => {
      const r = time(process.execPath, ['-r', path.join(__dirname, 'report-max-rss.js'), cli, 'trials', jobs, '--json', ...flags]);
      const field = (name: string) => Number(new RegExp(`${name} (\\d+)`).exec(r.stderr)?.[1] ?? NaN);
      return { ms: r.ms, rssMiB: field('max-rss-kib') / 1024, cpuS: field('cpu-us') / 1e6 };
    };
    // The floor's CPU: `times` prints the shell's own, then its children's (find, xargs, cat), as user and system.
    const floorRun = () => {
      const r = time('bash', ['-c', `find '${jobs}' -name result.json -print0 | xargs -0 cat > /dev/null; times >&2`]);
      const [user, sys] = [...(r.stderr.trim().split('\n').at(-1) ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map(
        (m) => Number(m[1]) * 60 + Number(m[2]),
      );
      return { ms: r.ms, cpuS: (user ?? NaN) + (sys ?? NaN) };
    };
    const rows: { vero: number; oneThread: number; floor: number; rssMiB: number }[] = [];
    const cpuS = (x: number) => `${x.toFixed(2)} CPU-s`;
    for (let round = 0; round < 3; round++) {
      const floor = floorRun();
      const vero = veroTrials(...(threads ? ['--threads', threads] : []));
      const one = veroTrials('--threads', '1');
      rows.push({ vero: vero.ms, oneThread: one.ms, floor: floor.ms, rssMiB: vero.rssMiB });
      process.stdout.write(
        `round ${round + 1}: vero trials ${(vero.ms / 1000).toFixed(2)} s, ${cpuS(vero.cpuS)} (peak RSS ${vero.rssMiB.toFixed(0)} MiB); ` +
          `--threads 1: ${(one.ms / 1000).toFixed(2)} s, ${cpuS(one.cpuS)}; find|xargs cat ${(floor.ms / 1000).toFixed(2)} s, ${cpuS(floor.cpuS)}; ratio ${(vero.ms / floor.ms).toFixed(2)}\n`,
      );
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
    const v = med(rows.map((r) => r.vero));
    const floor = med(rows.map((r) => r.floor));
    process.stdout.write(
      `\n${n} trial files (${(bytes / 1e6).toFixed(0)} MB), 500 tasks, ${os.availableParallelism()} cores, vero trials ${threads ? `--threads ${threads}` : 'with its default threads'}\n` +
        `median vero trials ${(v / 1000).toFixed(2)} s = ${Math.round(n / (v / 1000))} trials/s; ratio to the I/O floor ${(v / floor).toFixed(2)} ` +
        `(--threads 1: ${(med(rows.map((r) => r.oneThread)) / floor).toFixed(2)}; goal ≤ 1.5); peak RSS ${med(rows.map((r) => r.rssMiB)).toFixed(0)} MiB\n`,
    );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main();
