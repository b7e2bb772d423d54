/** Test fixtures: temp dirs, the example agent repo, vero.yaml files that drive the Harbor stand-in. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';

export const ROOT = path.resolve(__dirname, '..', '..');
export const STANDIN = path.join(ROOT, 'harbor-standin', 'harbor');
export const DATASET = path.join(ROOT, 'examples', 'datasets', 'mini-bench');
export const TASKS = ['add-cli-flag', 'count-words', 'fix-csv-parser', 'hello-world', 'reverse-string', 'sum-numbers'];

const made: string[] = [];
afterAll(() => {
  // VERO_KEEP_TMP=1 keeps them, to look at what a failing test left.
  if (process.env.VERO_KEEP_TMP) return;
  // Retried: a process a test stopped (a stand-in harbor killed with its worker) may still be writing as it exits.
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

export function tempDir(prefix = 'vero-test-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}

/** A fresh copy of the example agent repo (tags `baseline` and `improved`). */
export function agentRepo(dir = tempDir('vero-agent-')): string {
  const repo = path.join(dir, 'agent-repo');
  execFileSync(path.join(ROOT, 'examples', 'make-agent-repo.sh'), [repo], { stdio: 'ignore' });
  return repo;
}

export interface EvalFixture {
  dir: string;
  home: string;
  repo: string;
  configFile: string;
  invocationLog: string;
}

/** Writes a vero.yaml for the stand-in. `scenario` goes to HARBOR_STANDIN_SCENARIO with a private state dir. */
export function evalFixture(opts: {
  harbor?: Record<string, unknown>;
  scenario?: unknown;
  tasks?: Record<string, unknown>;
  execution?: Record<string, unknown>;
  scoring?: Record<string, unknown>;
  taskQueue: string;
  address: string;
}): EvalFixture {
  const dir = tempDir();
  const home = path.join(dir, 'home');
  const repo = agentRepo(dir);
  const invocationLog = path.join(dir, 'harbor-invocations.jsonl');
  const env: Record<string, string> = {
    HARBOR_STANDIN_TIME_SCALE: '0',
    HARBOR_STANDIN_LOG: invocationLog,
    HARBOR_STANDIN_STATE_DIR: path.join(dir, 'standin-state'),
  };
  if (opts.scenario) env.HARBOR_STANDIN_SCENARIO = JSON.stringify(opts.scenario);
  const { env: extraEnv, ...harbor } = (opts.harbor ?? {}) as { env?: Record<string, string> };
  const config = {
    agent_repo: repo,
    tasks: { source: { path: DATASET }, ...opts.tasks },
    harbor: {
      command: [STANDIN],
      agent: 'agent:SkillAgent',
      model: 'anthropic/claude-sonnet-4-5',
      ...harbor,
      env: { ...env, ...extraEnv },
    },
    scoring: { ...opts.scoring },
    execution: { concurrency: 3, heartbeat_timeout: '5s', task_timeout: '60s', ...opts.execution },
    temporal: { address: opts.address, task_queue: opts.taskQueue },
    home,
  };
  const configFile = path.join(dir, 'vero.yaml');
  fs.writeFileSync(configFile, stringify(config));
  return { dir, home, repo, configFile, invocationLog };
}

export interface Invocation {
  event: 'start' | 'end';
  invocation: string;
  pid: number;
  argv: string[];
  cwd: string;
  job_dir: string | null;
  time: string;
  exit_code?: number;
}

function allInvocations(logFile: string): Invocation[] {
  if (!fs.existsSync(logFile)) return [];
  return fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Invocation);
}

/** The harbor invocations that run tasks (the evaluation's one `--dry-run` preflight is counted by `preflights`). */
export const invocations = (logFile: string): Invocation[] => allInvocations(logFile).filter((i) => !i.argv.includes('--dry-run'));

/** Start lines of the preflight `harbor run … --dry-run` invocations. */
export const preflights = (logFile: string): Invocation[] =>
  allInvocations(logFile).filter((i) => i.argv.includes('--dry-run') && i.event === 'start');

/** The `-i` task of a harbor invocation. */
export const taskOf = (inv: Invocation): string => inv.argv[inv.argv.indexOf('-i') + 1]!;

/** Start lines per task. */
export function runsPerTask(logFile: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const inv of invocations(logFile).filter((i) => i.event === 'start')) out[taskOf(inv)] = (out[taskOf(inv)] ?? 0) + 1;
  return out;
}
