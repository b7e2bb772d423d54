/**
 * The real-Harbor tier's set-up: real `harbor` 0.25 (scripts/ensure-harbor) on a real Docker engine with the
 * offline base image (scripts/ensure-docker), small datasets the tests write, and a look at what Docker holds.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { agentRepo, DATASET, ROOT, tempDir } from './fixtures';
import { HARBOR_VERSION } from '../../model/harbor/version';

export const BASE_IMAGE = 'vero-base:bookworm';

/** Why real Harbor cannot run here, or null when it can. */
export function realHarborUnavailable(): string | null {
  if (spawnSync('docker', ['info'], { stdio: 'ignore' }).status !== 0) return 'no Docker engine answers (run scripts/ensure-docker)';
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status !== 0) return 'the docker compose v2 plugin is missing';
  if (spawnSync('docker', ['image', 'inspect', BASE_IMAGE], { stdio: 'ignore' }).status !== 0)
    return `the offline base image ${BASE_IMAGE} is missing`;
  return null;
}

/**
 * The describe a real-Harbor file runs its tests in: `describe` where Docker and the images are there; otherwise the
 * file fails with one test naming what is missing (never a silent skip) and its other tests do not start.
 */
export function describeOrFail(unavailable: string | null): jest.Describe {
  if (!unavailable) return describe;
  test('Docker, Harbor and the base images are there (the real-Harbor tier needs them)', () => {
    throw new Error(`${unavailable} (.ci/run provisions what the real-Harbor tier needs)`);
  });
  return describe.skip;
}

/**
 * A pinned harbor (installed by scripts/ensure-harbor on first use): the tier's tested version unless
 * VERO_HARBOR_VERSION (or `version`) names another supported one.
 */
export function harborBin(version: string = process.env.VERO_HARBOR_VERSION ?? HARBOR_VERSION): string {
  return execFileSync(path.join(ROOT, 'scripts', 'ensure-harbor'), [version], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

export interface TaskSpec {
  toml?: string;
  /** Dockerfile lines after `FROM vero-base:bookworm`; null: no environment/ dir. */
  dockerfile?: string[] | null;
  /** null: no root instruction.md (multi-step tasks). */
  instruction?: string | null;
  /** tests/test.sh body (the reward goes to /logs/verifier/reward.txt or reward.json). */
  test?: string;
  solve?: string;
  /** Extra files, relative to the task dir. */
  files?: Record<string, string>;
}

/** Writes a task dir (Harbor 0.25 layout) under `dataset`. */
export function writeTask(dataset: string, name: string, spec: TaskSpec): string {
  const dir = path.join(dataset, name);
  const write = (rel: string, text: string, mode = 0o644) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text, { mode });
  };
  write('task.toml', spec.toml ?? '[agent]\ntimeout_sec = 300.0\n\n[verifier]\ntimeout_sec = 120.0\n');
  if (spec.dockerfile !== null)
    write('environment/Dockerfile', [`FROM ${BASE_IMAGE}`, 'WORKDIR /app', ...(spec.dockerfile ?? [])].join('\n') + '\n');
  if (spec.instruction !== null) write('instruction.md', spec.instruction ?? `# ${name}\n`);
  if (spec.test !== undefined) write('tests/test.sh', `#!/bin/bash\n${spec.test}\n`, 0o755);
  if (spec.solve !== undefined) write('solution/solve.sh', `#!/bin/bash\n${spec.solve}\n`, 0o755);
  for (const [rel, text] of Object.entries(spec.files ?? {})) write(rel, text, rel.endsWith('.sh') ? 0o755 : 0o644);
  return dir;
}

export const REWARD_1 = 'echo 1 > /logs/verifier/reward.txt';

/** A vero.yaml for real Harbor; the agent repo defaults to a fresh copy of the example (real SkillAgent). */
export function realFixture(opts: {
  taskQueue: string;
  address: string;
  dataset?: string;
  repo?: string;
  harbor?: Record<string, unknown>;
  tasks?: Record<string, unknown>;
  execution?: Record<string, unknown>;
  scoring?: Record<string, unknown>;
}): { dir: string; home: string; repo: string; configFile: string } {
  const dir = tempDir('vero-real-');
  const home = path.join(dir, 'home');
  const repo = opts.repo ?? agentRepo(dir);
  const config = {
    agent_repo: repo,
    tasks: { source: { path: opts.dataset ?? DATASET }, ...opts.tasks },
    harbor: { command: [harborBin()], agent: 'agent:SkillAgent', ...opts.harbor },
    scoring: { ...opts.scoring },
    execution: { concurrency: 3, heartbeat_timeout: '30s', task_timeout: '5m', task_attempts: 2, ...opts.execution },
    temporal: { address: opts.address, task_queue: opts.taskQueue },
    home,
  };
  const configFile = path.join(dir, 'vero.yaml');
  fs.writeFileSync(configFile, stringify(config));
  return { dir, home, repo, configFile };
}

const list = (args: string[]): string[] =>
  String(execFileSync('docker', args, { encoding: 'utf8' }))
    .split('\n')
    .filter(Boolean);

/** Names of every container, network, image and volume Docker holds now. */
export function dockerObjects(): string[] {
  return [
    ...list(['ps', '-a', '--format', 'container {{.Names}}']),
    ...list(['network', 'ls', '--format', 'network {{.Name}}']),
    ...list(['image', 'ls', '--format', 'image {{.Repository}}:{{.Tag}}']),
    ...list(['volume', 'ls', '--format', 'volume {{.Name}}']),
  ].sort();
}

/** The Docker objects that belong to any of these trials' compose projects (`<trial>__env…`). */
export function trialObjects(trialNames: string[]): string[] {
  const prefixes = trialNames.map((t) => `${t.toLowerCase()}__`);
  return dockerObjects().filter((o) => prefixes.some((p) => o.split(' ')[1]!.startsWith(p)));
}
