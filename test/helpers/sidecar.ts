/** The eval sidecar as a real process for tests: compiled example configs pointed at host paths, and its clients. */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { buildTaskDir } from '../../compiler/compile';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { agentRepo, DATASET, invocations, ROOT, STANDIN, tempDir, type Invocation } from './fixtures';
import { runCommand } from './process';
import { address, uniqueQueue } from './temporal';

export const VERO = path.join(ROOT, 'bin', 'vero');
export const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=opt', '-c', 'user.email=opt@x', '-c', 'commit.gpgsign=false', ...args], {
    encoding: 'utf8',
  }).trim();

export interface Sidecar {
  url: string;
  proc: ChildProcess;
  log: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

export interface Setup {
  dir: string;
  serveFile: string;
  cfg: ServeConfig;
  work: string;
  queue: string;
}

/** A compiled task's serve config pointed at host paths: the baseline and workspace repos, the volumes under `dir`. */
export function onHost(task: string, dir: string, work: string): Pick<ServeConfig, 'repo_path' | 'agent_repo_path' | 'paths'> {
  return {
    repo_path: path.join(task, 'environment', 'agent-baseline'),
    agent_repo_path: work,
    paths: {
      home: path.join(dir, 'home'),
      agent_volume: path.join(dir, 'agent-results'),
      admin_volume: path.join(dir, 'admin'),
      token_path: path.join(dir, 'token', 'admin.token'),
      build_digest: path.join(task, 'environment', 'sidecar', 'build-digest'),
      ledger_seal_key: path.join(task, 'environment', 'sidecar', 'ledger-seal.key'),
      resume_dir: path.join(dir, 'resume'),
    },
  };
}

/**
 * This test file's compiled tasks by build file, for set-ups that share them (`shareBuild`): compiled once from the
 * file's one agent repo; each set-up still gets its own baseline repo, workspace and volumes. They are compiled one
 * at a time (set-ups of concurrent tests included), so the builds after the first link its vero package instead of
 * writing their own.
 */
const sharedBuilds = new Map<string, Promise<string>>();
let lastSharedBuild: Promise<unknown> = Promise.resolve();
let sharedRepo: string | undefined;

/** Writes the build file into `dir` and compiles it to `dir`/task. */
async function compileIn(dir: string, buildYaml: string): Promise<string> {
  const build = path.join(dir, 'build.yaml');
  fs.writeFileSync(build, buildYaml);
  const task = path.join(dir, 'task');
  await buildTaskDir(build, task, { skipSecretCheck: true, linkRuntime: true });
  return task;
}

/**
 * Compiles the mode B example, then points its serve config at host paths (the container paths of a real task).
 * With `shareBuild`, a set-up whose build file an earlier one of this test file had reuses that compiled task (its
 * baseline repo copied, as the sidecar adds candidate refs to it); the task is then not under `dir`.
 */
export async function setup(
  over: {
    budgets?: unknown[];
    scenario?: unknown;
    timeScale?: string;
    reward_mode?: string;
    submit_enabled?: boolean;
    read_only_paths?: string[];
    harbor?: Record<string, unknown>;
    secrets?: string[];
    /** More build.yaml keys (they replace the defaults here). */
    build?: Record<string, unknown>;
  } = {},
  opts: { shareBuild?: boolean } = {},
): Promise<Setup> {
  const dir = tempDir('vero-sidecar-');
  const repo = opts.shareBuild ? (sharedRepo ??= agentRepo(tempDir('vero-sidecar-repo-'))) : agentRepo(dir);
  const buildYaml = stringify({
    name: 'test/opt',
    agent_repo: repo,
    mode: 'B',
    inner_task: DATASET,
    harbor: { command: [STANDIN], agent: 'agent:SkillAgent', ...over.harbor },
    partition: {
      train: ['hello-world', 'count-words', 'reverse-string'],
      validation: ['sum-numbers', 'fix-csv-parser'],
      test: ['add-cli-flag'],
    },
    splits: [
      { split: 'train', access: 'viewable' },
      { split: 'validation', access: 'non_viewable' },
      { split: 'test', access: 'no_access' },
    ],
    budgets: over.budgets ?? [
      { split: 'train', total_run_budget: 5 },
      { split: 'validation', total_run_budget: 3 },
    ],
    selection_split: 'validation',
    targets: [{ split: 'test', reward_key: 'reward' }],
    reward_mode: over.reward_mode ?? 'auto_best',
    submit_enabled: over.submit_enabled ?? false,
    read_only_paths: over.read_only_paths ?? [],
    secrets: over.secrets ?? [],
    ...over.build,
  });
  let task: string;
  if (opts.shareBuild) {
    let built = sharedBuilds.get(buildYaml);
    if (!built) {
      built = lastSharedBuild.then(() => compileIn(tempDir('vero-sidecar-build-'), buildYaml));
      sharedBuilds.set(buildYaml, built);
      lastSharedBuild = built.catch(() => undefined);
    }
    task = await built;
  } else task = await compileIn(dir, buildYaml);
  const work = path.join(dir, 'workspace-agent');
  fs.cpSync(path.join(task, 'environment', 'agent-seed'), work, { recursive: true });
  git(work, 'reset', '-q'); // as the task's seed script does: the build ships no git index
  const cfg = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(task, 'environment/sidecar/serve.json'), 'utf8')));
  const env: Record<string, string> = {
    HARBOR_STANDIN_TIME_SCALE: over.timeScale ?? '0',
    HARBOR_STANDIN_LOG: path.join(dir, 'harbor.jsonl'),
  };
  if (over.scenario) env.HARBOR_STANDIN_SCENARIO = JSON.stringify(over.scenario);
  const host = onHost(task, dir, work);
  if (opts.shareBuild) {
    host.repo_path = path.join(dir, 'agent-baseline');
    fs.cpSync(path.join(task, 'environment', 'agent-baseline'), host.repo_path, { recursive: true });
  }
  const hostCfg: ServeConfig = {
    ...cfg,
    ...host,
    mode_b: { ...cfg.mode_b!, task_source: { path: DATASET }, harbor: { ...cfg.mode_b!.harbor, env } },
    harness_user: 'vero-no-such-user',
    heartbeat_timeout_sec: 5,
    port: 0,
    host: '127.0.0.1',
  };
  const serveFile = path.join(dir, 'serve.json');
  fs.writeFileSync(serveFile, JSON.stringify(hostCfg, null, 2));
  return { dir, serveFile, cfg: hostCfg, work, queue: uniqueQueue('sidecar') };
}

export async function startSidecar(s: Setup, env: Record<string, string> = {}): Promise<Sidecar> {
  const proc = spawn(VERO, ['serve', '--config', s.serveFile, '--address', address(), '--task-queue', s.queue], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  for (let i = 0; i < 1200 && !/listening on \d+/.test(stdout); i++) {
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const port = /listening on (\d+)/.exec(stdout)?.[1];
  if (!port) throw new Error(`sidecar did not start: ${stderr}`);
  return {
    url: `http://127.0.0.1:${port}`,
    proc,
    log: () => stdout + stderr,
    stop: async (signal = 'SIGTERM') => {
      proc.kill(signal);
      return exited;
    },
  };
}

/** `vero <args>` as the optimizer runs it, against the sidecar at `url`. */
export const cli = (args: string[], url: string) => runCommand(VERO, args, { VERO_EVAL_URL: url });

export async function post(
  url: string,
  route: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

/** The optimizer's move: make the candidate solve everything, and commit. */
export function commitImprovement(work: string, solves: string[] = ['*']): string {
  fs.writeFileSync(path.join(work, 'harbor-standin-agent.json'), JSON.stringify({ solves }));
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'solve everything');
  return git(work, 'rev-parse', 'HEAD');
}

export function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

/** The compiled Mode A example, pointed at host paths. */
export async function modeASetup(): Promise<{ dir: string; serveFile: string; hostCfg: ServeConfig; work: string }> {
  const dir = tempDir('vero-mode-a-');
  fs.cpSync(path.join(ROOT, 'examples'), path.join(dir, 'examples'), {
    recursive: true,
    filter: (p) => !p.includes(`${path.sep}agent-repo`),
  });
  agentRepo(path.join(dir, 'examples'));
  // These tests start from the example's improved commit (it answers + and *); the example itself starts the
  // optimizer from the baseline.
  const build = path.join(dir, 'examples', 'mode-a', 'build.yaml');
  fs.writeFileSync(build, fs.readFileSync(build, 'utf8').replace(/^agent_ref: baseline\b/m, 'agent_ref: improved'));
  const task = path.join(dir, 'task');
  await buildTaskDir(build, task, { skipSecretCheck: true, linkRuntime: true });
  const work = path.join(dir, 'workspace-agent');
  fs.cpSync(path.join(task, 'environment', 'agent-seed'), work, { recursive: true });
  git(work, 'reset', '-q'); // as the task's seed script does: the build ships no git index
  const cfg = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(task, 'environment/sidecar/serve.json'), 'utf8')));
  const serveFile = path.join(dir, 'serve.json');
  const hostCfg: ServeConfig = {
    ...cfg,
    ...onHost(task, dir, work),
    mode_a: modeAOnHost(cfg.mode_a!, task),
    port: 0,
    host: '127.0.0.1',
  };
  fs.writeFileSync(serveFile, JSON.stringify(hostCfg));
  return { dir, serveFile, hostCfg, work };
}

/** A Mode A section with the task's baked dataset, scorer or harness where this host has them. */
export function modeAOnHost(a: NonNullable<ServeConfig['mode_a']>, task: string): NonNullable<ServeConfig['mode_a']> {
  const sidecar = path.join(task, 'environment/sidecar');
  if ('harness' in a) return { ...a, harness: { ...a.harness, dir: path.join(sidecar, 'harness') } };
  return { ...a, dataset_dir: path.join(sidecar, 'dataset'), scorer: { ...a.scorer, cwd: path.join(sidecar, 'scorer') } };
}

/** The harbor runs (preflights left out) the stand-in logged for a sidecar set-up, in start order. */
export const harborStarts = (s: { dir: string }): Invocation[] =>
  invocations(path.join(s.dir, 'harbor.jsonl')).filter((i) => i.event === 'start');

/** POST /finalize as the verifier does, with the set-up's admin token. */
export async function finalizeAsVerifier(
  side: { url: string },
  s: { cfg: ServeConfig },
): Promise<{ status: number; json: Record<string, unknown> }> {
  const token = fs.readFileSync(s.cfg.paths.token_path, 'utf8');
  return post(side.url, '/finalize', {}, { authorization: `Bearer ${token}` });
}
