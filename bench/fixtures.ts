/** What the benchmark scripts share: flags, a generated dataset of N tasks, the example agent repo. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../infra/temporal-cli';

/** `--name N` from argv, else the fallback. */
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
