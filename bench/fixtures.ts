/** What the benchmark scripts share: flags, a generated dataset of N tasks, the example agent repo. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../infra/package-root';

/** `--name N` from argv, else the fallback. */
/** The median (the upper one of an even count), as the benches report figures over rounds. */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** `--name VALUE` from argv, else the fallback. */
export function stringArg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? String(process.argv[i + 1]) : fallback;
}

/**
 * N copies of the example hello-world task (`task-00000`…), each named by its dir. Returns the names. With
 * `links`, every task but the first is a symlink to the first (Harbor follows them; fast at 100k tasks).
 */
export function makeDataset(dir: string, n: number, links = false): string[] {
  const template = path.join(PROJECT_ROOT, 'examples', 'datasets', 'mini-bench', 'hello-world');
  const names: string[] = [];
  const width = Math.max(5, String(n - 1).length);
  for (let i = 0; i < n; i++) {
    const name = `task-${String(i).padStart(width, '0')}`;
    if (links && i > 0) {
      fs.symlinkSync(names[0]!, path.join(dir, name));
      names.push(name);
      continue;
    }
    fs.cpSync(template, path.join(dir, name), { recursive: true });
    fs.writeFileSync(
      path.join(dir, name, 'task.toml'),
      `schema_version = "1.4"\n[agent]\ntimeout_sec = 600.0\n[verifier]\ntimeout_sec = 60.0\n[environment]\n`,
    );
    names.push(name);
  }
  return names;
}

/** The example agent repo (candidates `baseline` and `improved`) at `dest`. */
export function makeAgentRepo(dest: string): string {
  execFileSync(path.join(PROJECT_ROOT, 'examples', 'make-agent-repo.sh'), [dest], { stdio: 'ignore' });
  return dest;
}

/** A temp dir with a generated dataset of `nTasks` tasks and the example agent repo. */
export function benchWorkspace(
  prefix: string,
  nTasks: number,
  links = false,
): { tmp: string; dataset: string; tasks: string[]; repo: string } {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const dataset = path.join(tmp, 'dataset');
  fs.mkdirSync(dataset);
  const tasks = makeDataset(dataset, nTasks, links);
  const repo = makeAgentRepo(path.join(tmp, 'agent-repo'));
  return { tmp, dataset, tasks, repo };
}

/**
 * `vero dev` as the README starts it, on a free port with a temp SQLite file; stopped with Ctrl-C's signal.
 * `slots`: its worker's `--max-concurrent-tasks` (default: the README's, sized by memory); `flags`: more of its
 * flags (e.g. `--db-sync full`); `profileDir`: write its main thread's CPU profile there (cpu-profile-preload.ts);
 * `env`: more of its environment.
 */
export async function startVeroDev(
  tmp: string,
  slots?: number,
  opts: { flags?: string[]; profileDir?: string; env?: Record<string, string> } = {},
): Promise<{ address: string; pid: number; stop: () => Promise<void> }> {
  const port = 17_000 + Math.floor(Math.random() * 2_000);
  const profiling = opts.profileDir
    ? {
        NODE_OPTIONS: `--require ${path.join(PROJECT_ROOT, 'dist', 'bench', 'cpu-profile-preload.js')}`,
        VERO_CPU_PROFILE_DIR: opts.profileDir,
      }
    : {};
  const proc: ChildProcess = spawn(
    path.join(PROJECT_ROOT, 'bin', 'vero'),
    [
      'dev',
      '--port',
      String(port),
      '--db',
      path.join(tmp, 'dev.db'),
      ...(slots ? ['--max-concurrent-tasks', String(slots)] : []),
      ...(opts.flags ?? []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, VERO_HOME: path.join(tmp, 'vero-home'), ...profiling, ...opts.env },
    },
  );
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => proc.on('exit', () => r()));
  const address = `127.0.0.1:${port}`;
  for (let i = 0; i < 600 && !/worker .*polling|worker ready|polling/i.test(out); i++) {
    if (proc.exitCode !== null) throw new Error(`vero dev exited: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stdout.write(`vero dev: ${out.split('\n').filter(Boolean).slice(-3).join(' | ')}\n`);
  return {
    address,
    pid: proc.pid!,
    stop: async () => {
      proc.kill('SIGINT');
      await exited;
    },
  };
}
