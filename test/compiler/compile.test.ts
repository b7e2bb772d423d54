/** The compiler: structure, every file parsed back, escaping, determinism, and each review rule as a failure test. */
import { conforming } from '../helpers/json-schema';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { parse as parseToml } from 'smol-toml';
import * as tar from 'tar';
import { parse as parseYaml, stringify } from 'yaml';
import { compileTaskDir as compileActivity } from '../../activities/compile-task';
import { loadBuildConfig } from '../../compiler/build-config';
import { buildTaskDir, BuildOptions, MANIFEST } from '../../compiler/compile';
import { sidecarDockerfile } from '../../compiler/containers';
import { ensureHarborWheelhouse } from '../../infra/foreground';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { agentRepo, DATASET, ROOT, tempDir } from '../helpers/fixtures';
import { runVero } from '../helpers/process';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(60_000);

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], {
    encoding: 'utf8',
  }).trim();

function modeB(over: Record<string, unknown> = {}, repo = agentRepo()): Record<string, unknown> {
  return {
    name: 'acme/opt-task',
    description: 'Optimize it',
    agent_repo: repo,
    mode: 'B',
    inner_task: DATASET,
    harbor: { agent: 'agent:MiniAgent', model: 'anthropic/x', n_attempts: 2 },
    partition: { train: ['hello-world', 'count-words'], validation: ['sum-numbers'], test: ['add-cli-flag'] },
    splits: [
      { split: 'train', access: 'viewable' },
      { split: 'validation', access: 'non_viewable' },
      { split: 'test', access: 'no_access' },
    ],
    budgets: [{ split: 'validation', total_run_budget: 3 }],
    selection_split: 'validation',
    targets: [{ split: 'test', reward_key: 'accuracy' }],
    secrets: ['VERO_TEST_SECRET_A'],
    read_only_paths: ['scorer'],
    ...over,
  };
}

function writeConfig(cfg: Record<string, unknown>): string {
  const file = path.join(tempDir(), 'build.yaml');
  fs.writeFileSync(file, stringify(cfg));
  return file;
}

/**
 * A build whose vero package, Temporal CLI and wheels are hard links (linkRuntime): for the tests that read other
 * files ('a mode B build' checks the packed runtime, and that linking changes no file).
 */
const buildLinked = (file: string, out: string, opts: BuildOptions = {}) => buildTaskDir(file, out, { linkRuntime: true, ...opts });

async function buildError(
  cfg: Record<string, unknown> | string,
  out = path.join(tempDir(), 'task'),
  opts = { skipSecretCheck: true },
): Promise<string> {
  const file = typeof cfg === 'string' ? cfg : writeConfig(cfg);
  const err = await buildLinked(file, out, opts).then(
    () => null,
    (e: Error) => e,
  );
  if (!err) throw new Error('the build succeeded');
  return err.message;
}

/** One SHA-256 over a whole tree: every path, its type and mode, and its bytes (or a link's target). */
function treeHash(root: string): string {
  const h = createHash('sha256');
  const walk = (rel: string) => {
    const p = path.join(root, rel);
    const st = fs.lstatSync(p);
    h.update(`${rel}\0${st.mode.toString(8)}\0`);
    if (st.isSymbolicLink()) h.update(fs.readlinkSync(p));
    else if (st.isDirectory()) for (const e of fs.readdirSync(p).sort()) walk(rel ? `${rel}/${e}` : e);
    else h.update(fs.readFileSync(p));
    h.update('\n');
  };
  walk('');
  return h.digest('hex');
}

/** The entries of a tar: path → type and mode, and whether it names an owner. */
function tarEntries(file: string): Map<string, { type: string; mode: number; owned: boolean }> {
  const entries = new Map<string, { type: string; mode: number; owned: boolean }>();
  tar.t({
    file,
    sync: true,
    onReadEntry: (e) =>
      void entries.set(e.path.replace(/\/$/, ''), {
        type: e.type,
        mode: e.mode ?? 0,
        owned: Boolean(e.uid || e.gid || e.uname || e.gname),
      }),
  });
  return entries;
}

const SECRET_VALUE = 'sk-test-secret-value-should-never-be-written';

describe('a mode B build', () => {
  let out: string;
  let file: string;
  beforeAll(async () => {
    process.env.VERO_TEST_SECRET_A = SECRET_VALUE;
    file = writeConfig(modeB());
    out = path.join(tempDir(), 'task');
    await buildTaskDir(file, out);
  });
  afterAll(() => delete process.env.VERO_TEST_SECRET_A);

  test('has the task layout', () => {
    for (const rel of [
      'task.toml',
      'instruction.md',
      'tests/test.sh',
      'solution/solve.sh',
      MANIFEST,
      'environment/Dockerfile',
      'environment/docker-compose.yaml',
      'environment/main/seed.sh',
      'environment/sidecar/Dockerfile',
      'environment/sidecar/serve.json',
      'environment/agent-baseline/.git',
      'environment/agent-seed/.git',
      'environment/agent-baseline/agent.py',
      'environment/sidecar/inner-task/hello-world/task.toml',
      'environment/vero.tar',
      // Self-contained: the vero package with its production dependencies, the Temporal CLI, Harbor's wheels, the sidecar's engine start.
      'environment/sidecar/temporal',
      'environment/sidecar/harbor-wheelhouse',
      'environment/sidecar/start.sh',
      'environment/sidecar/nested-images.tar',
    ])
      expect(fs.existsSync(path.join(out, rel))).toBe(true);
    for (const s of ['tests/test.sh', 'solution/solve.sh', 'environment/main/seed.sh', 'environment/sidecar/start.sh'])
      expect(fs.statSync(path.join(out, s)).mode & 0o111).toBeTruthy();
    // The package is one tar (the images ADD it to /opt/vero): its files, no owner (Docker makes them root's).
    const pkg = tarEntries(path.join(out, 'environment/vero.tar'));
    for (const rel of [
      'package.json',
      'dist/cli/main.js',
      'scripts/ensure-temporal',
      'node_modules/@temporalio/worker/package.json',
      'node_modules/fastify/package.json',
    ])
      expect(pkg.get(rel)?.type).toBe('File');
    expect(pkg.get('bin/vero')!.mode & 0o111).toBeTruthy();
    expect([...pkg.values()].some((e) => e.owned)).toBe(false);
    const listed = (JSON.parse(fs.readFileSync(path.join(out, MANIFEST), 'utf8')) as { files: Record<string, string> }).files;
    expect(listed['environment/vero.tar']).toBe(
      createHash('sha256')
        .update(fs.readFileSync(path.join(out, 'environment/vero.tar')))
        .digest('hex'),
    );
    // Development dependencies and other platforms' native builds stay out.
    const within = (dir: string) => [...pkg.keys()].filter((p) => p === dir || p.startsWith(`${dir}/`));
    expect(within('node_modules/jest')).toEqual([]);
    expect(within('node_modules/typescript')).toEqual([]);
    const releases = 'node_modules/@temporalio/core-bridge/releases';
    expect([...new Set(within(releases).map((p) => p.slice(releases.length + 1).split('/')[0]))].filter(Boolean)).toEqual([
      `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-gnu`,
    ]);
    expect(fs.readdirSync(path.join(out, 'environment/sidecar/harbor-wheelhouse')).some((f) => /^harbor-0\.26\.0-.*\.whl$/.test(f))).toBe(
      true,
    );
  });

  test('the Dockerfiles need no registry and no network when the base image has the packages', () => {
    for (const rel of ['environment/Dockerfile', 'environment/sidecar/Dockerfile']) {
      const text = fs.readFileSync(path.join(out, rel), 'utf8');
      expect(text).toMatch(/^FROM debian:trixie-slim$/m);
      expect(text).not.toMatch(/npm (ci|install)|pip install (?!--quiet --no-index)|curl|ensure-temporal/);
      expect(text).toContain("dpkg-query -W -f='${Status}'");
    }
    const sidecar = fs.readFileSync(path.join(out, 'environment/sidecar/Dockerfile'), 'utf8');
    expect(sidecar).toContain('pip install --quiet --no-index --find-links /tmp/harbor-wheelhouse harbor==0.26.0');
    expect(sidecar).toContain('ENV TEMPORAL_CLI_PATH=/usr/local/bin/temporal');
    expect(sidecar).toMatch(/for p in bash ca-certificates git nodejs python3 python3-venv docker\.io docker-cli docker-compose iptables;/);
    expect(fs.readFileSync(path.join(out, 'environment/Dockerfile'), 'utf8')).not.toContain('docker');
  });

  test('harbor_packages go beside the sidecar’s Harbor (one offline install, a specifier quoted); Harbor itself or a pip option refused', async () => {
    const c = loadBuildConfig(writeConfig(modeB({ harbor_packages: ['openai==2.46.0', 'httpx>=0.27,<1'] })));
    expect(sidecarDockerfile(c)).toContain("--find-links /tmp/harbor-wheelhouse harbor==0.26.0 openai==2.46.0 'httpx>=0.27,<1' \\");
    expect(await buildError(modeB({ harbor_packages: ['Harbor[modal]==0.20.0', '--index-url=x'] }))).toMatch(
      /harbor_packages\.0: Harbor itself is harbor_version[^]*harbor_packages\.1: expected a requirement/,
    );
  });

  test('harbor_version pins the sidecar’s Harbor: 0.25.0 on request, an unsupported one refused by name', async () => {
    const c = loadBuildConfig(writeConfig(modeB({ harbor_version: '0.25.0' })));
    expect(sidecarDockerfile(c)).toContain('--find-links /tmp/harbor-wheelhouse harbor==0.25.0');
    expect(fs.readdirSync(ensureHarborWheelhouse('3.13', '0.25.0')).some((f) => /^harbor-0\.25\.0-.*\.whl$/.test(f))).toBe(true);
    expect(await buildError(modeB({ harbor_version: '0.24.1' }))).toMatch(
      /build\.yaml: harbor_version: expected a Harbor version vero-harbor supports \(0\.25\.0, 0\.26\.0\), got "0\.24\.1"/,
    );
  });

  test('task.toml is a valid Harbor TaskConfig', () => {
    const toml = parseToml(fs.readFileSync(path.join(out, 'task.toml'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(toml.schema_version).toBe('1.4');
    expect(toml.task).toEqual({ name: 'acme/opt-task', description: 'Optimize it' });
    expect(toml.agent!.user).toBe('agent');
    // finalize's worst case: 3 re-scores of validation + 1 target, each 300 s preflight + one wave of
    // 3 attempts × 1800 s + 2 back-offs × 120 s, plus 300 s start-up.
    // Start-up, the drain (600 s + 120 s to cancel), then 4 trusted evaluations.
    expect(toml.verifier).toMatchObject({ timeout_sec: 300 + 600 + 120 + 4 * (300 + 3 * 1800 + 2 * 120), environment_mode: 'shared' });
    // The sidecar's session is snapshotted and collected before the verifier (and when a trial fails).
    expect((toml.verifier!.collect as { service: string; command: string }[])[0]).toMatchObject({ service: 'eval-sidecar' });
    expect((toml.verifier!.collect as { command: string }[])[0]!.command).toContain('/state/admin/session');
    expect(toml.artifacts).toEqual([{ source: '/state/admin/session', destination: 'vero-session', service: 'eval-sidecar' }]);
    expect(toml.environment!.build_timeout_sec).toBe(1800);
  });

  test('compose: main depends on a healthy sidecar, volumes are wired, the secret is only in the sidecar behind a guard', () => {
    const compose = parseYaml(fs.readFileSync(path.join(out, 'environment/docker-compose.yaml'), 'utf8')) as {
      services: Record<string, Record<string, unknown>>;
      volumes: Record<string, unknown>;
    };
    const { main, 'eval-sidecar': sidecar } = compose.services as Record<string, Record<string, unknown>>;
    expect(main!.depends_on).toEqual({ 'eval-sidecar': { condition: 'service_healthy' } });
    expect(main!.volumes).toEqual(['agent_repo:/workspace/agent', 'agent_results:/state/agent-results:ro', 'token_state:/state/token:ro']);
    // Every declared secret is set empty in main, whatever the host's environment holds.
    expect(main!.environment).toEqual({ VERO_EVAL_URL: 'http://eval-sidecar:8000', VERO_TEST_SECRET_A: '' });
    expect(sidecar!.volumes).toEqual([
      'agent_repo:/workspace/agent:ro',
      'agent_results:/state/agent-results',
      'admin_state:/state/admin',
      'token_state:/state/token',
      // A rescued session (`vero run --resume-from` sets the variable), else an empty volume; main never sees it.
      '${VERO_RESUME_SESSION:-resume_session}:/state/resume:ro',
      // The nested environment is docker: the sidecar's own engine, its data on a volume Harbor removes.
      'sidecar_docker:/var/lib/docker',
      '/sys/fs/cgroup:/sys/fs/cgroup:rw',
    ]);
    expect(sidecar).toMatchObject({
      command: ['/opt/sidecar-start.sh'],
      cap_add: ['SYS_ADMIN', 'NET_ADMIN'],
      security_opt: ['seccomp=unconfined', 'apparmor=unconfined'],
      cgroup: 'host',
    });
    // main is never privileged and never reaches an engine.
    for (const k of ['privileged', 'cap_add', 'security_opt', 'cgroup']) expect(main).not.toHaveProperty(k);
    expect(JSON.stringify(main)).not.toMatch(/docker\.sock|sidecar_docker|cgroup/);
    expect((sidecar!.environment as Record<string, string>).VERO_TEST_SECRET_A).toBe(
      '${VERO_TEST_SECRET_A:?VERO_TEST_SECRET_A must be set in the host environment for the eval sidecar}',
    );
    expect((sidecar!.healthcheck as { test: string[] }).test.slice(0, 2)).toEqual(['CMD', 'node']);
    expect(Object.keys(compose.volumes).sort()).toEqual([
      'admin_state',
      'agent_repo',
      'agent_results',
      'resume_session',
      'sidecar_docker',
      'token_state',
    ]);
    expect(JSON.stringify(main)).not.toMatch(/resume/);
    expect(JSON.stringify(main)).not.toMatch(/VERO_TEST_SECRET_A":"[^"]/); // named only to be blanked
  });

  test('no file anywhere in the output holds the secret value', () => {
    const hits = spawnSync('grep', ['-rl', SECRET_VALUE, out], { encoding: 'utf8' });
    expect(hits.stdout).toBe('');
  });

  test('serve.json validates with the sidecar schema; baseline, seed and serve.json share one commit', () => {
    const serve = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(out, 'environment/sidecar/serve.json'), 'utf8')));
    expect(serve).toMatchObject({
      mode: 'B',
      repo_path: '/opt/agent-baseline',
      agent_repo_path: '/workspace/agent',
      selection_split: 'validation',
      targets: [{ split: 'test', reward_key: 'accuracy' }],
      secrets: ['VERO_TEST_SECRET_A'],
    });
    expect(serve.mode_b).toMatchObject({
      task_source: { path: '/opt/inner-task' },
      harbor: { agent: 'agent:MiniAgent', n_attempts: 2, max_retries: 0 },
    });
    const baseline = git(path.join(out, 'environment/agent-baseline'), 'rev-parse', 'HEAD');
    expect(git(path.join(out, 'environment/agent-seed'), 'rev-parse', 'HEAD')).toBe(baseline);
    expect(serve.base_commit).toBe(baseline);
  });

  test('scripts parse; read_only_paths reach the sidecar (which enforces them) and the instruction; test.sh finalizes', () => {
    for (const s of ['tests/test.sh', 'solution/solve.sh', 'environment/main/seed.sh'])
      expect(spawnSync('bash', ['-n', path.join(out, s)]).status).toBe(0);
    const seed = fs.readFileSync(path.join(out, 'environment/main/seed.sh'), 'utf8');
    expect(seed).toContain('enforced by the eval sidecar on every candidate commit');
    expect(JSON.parse(fs.readFileSync(path.join(out, 'environment/sidecar/serve.json'), 'utf8')).read_only_paths).toEqual(['scorer']);
    expect(fs.readFileSync(path.join(out, 'instruction.md'), 'utf8')).toContain(
      'Read-only paths: `scorer`. A commit that changes, deletes, renames or replaces anything matching them',
    );
    expect(fs.readFileSync(path.join(out, 'tests/test.sh'), 'utf8')).toContain(
      'vero finalize --token-file /state/token/admin.token --output /logs/verifier/reward.json --details /logs/verifier/finalize.json',
    );
    expect(fs.readFileSync(path.join(out, 'solution/solve.sh'), 'utf8')).toContain('vero eval --split validation');
  });

  test('instruction.md is true to the config', () => {
    const text = fs.readFileSync(path.join(out, 'instruction.md'), 'utf8');
    expect(text).toContain('vero eval --split validation');
    expect(text).toContain('Run `vero eval wait <id>` (again as often as it says still running)');
    expect(text).toContain('| `test` | no_access | hidden');
    expect(text).toContain(
      '| `validation` | non_viewable | you can evaluate it and see the aggregate score only (a request must cover at least 5 cases, or the whole split) | 3 run(s) |',
    );
    expect(text).toContain('| `train` | viewable | you can evaluate it and read per-sample results | no budget: not evaluable |');
    expect(text).toContain('top 3 `validation` scores (from evaluations covering at least 90% of it)');
    expect(text).toContain('with none, your last evaluated candidate is graded');
    expect(text).toContain('An evaluation still running when your time ends is waited for (up to 10 min)');
    expect(text).not.toContain('vero submit');
  });

  // Harbor merges the task's compose file over its own base (`services.main.build.context` = the environment
  // dir), so the file is checked the same way: merged over an equivalent base.
  const composeAvailable = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
  if (!composeAvailable)
    console.warn('*** skipped `docker compose config`: the compose plugin is not installed (scripts/ensure-docker) ***');
  (composeAvailable ? test : test.skip)('docker compose config accepts the compose file merged over Harbor’s base', () => {
    const base = path.join(tempDir(), 'docker-compose-build.yaml');
    fs.writeFileSync(
      base,
      `services:\n  main:\n    build:\n      context: ${path.join(out, 'environment')}\n    command: ["sh", "-c", "sleep infinity"]\n`,
    );
    const r = spawnSync('docker', ['compose', '-f', base, '-f', path.join(out, 'environment/docker-compose.yaml'), 'config', '-q'], {
      env: { ...process.env, VERO_TEST_SECRET_A: 'x' },
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  test('the same inputs give a byte-identical task dir (git repos included), the same baseline commit and build digest', async () => {
    const again = path.join(tempDir(), 'task');
    const r = await buildTaskDir(file, again);
    expect(fs.readFileSync(path.join(again, MANIFEST), 'utf8')).toBe(fs.readFileSync(path.join(out, MANIFEST), 'utf8'));
    expect(treeHash(again)).toBe(treeHash(out));
    expect(r.buildDigest).toBe(fs.readFileSync(path.join(out, 'environment/sidecar/build-digest'), 'utf8').trim());
    // No git index (it holds file times): the seed script and the sidecar's image make it from the commit.
    expect(fs.existsSync(path.join(out, 'environment/agent-seed/.git/index'))).toBe(false);
    expect(fs.readFileSync(path.join(out, 'environment/main/seed.sh'), 'utf8')).toContain('git -C /workspace/agent reset -q');
    expect(fs.readFileSync(path.join(out, 'environment/sidecar/Dockerfile'), 'utf8')).toContain('RUN git -C /opt/agent-baseline reset -q');
  });

  test('linkRuntime (throwaway builds) gives the same files, the package shared between them, the CLI hard-linked to its source', async () => {
    const linked = path.join(tempDir(), 'task');
    await buildTaskDir(file, linked, { linkRuntime: true });
    const again = path.join(tempDir(), 'task');
    await buildTaskDir(file, again, { linkRuntime: true });
    for (const dir of [linked, again])
      expect(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')).toBe(fs.readFileSync(path.join(out, MANIFEST), 'utf8'));
    const pkg = (dir: string) => fs.statSync(path.join(dir, 'environment/vero.tar'));
    expect(pkg(again).ino).toBe(pkg(linked).ino);
    expect(pkg(out).nlink).toBe(1);
    expect(fs.statSync(path.join(linked, 'environment/sidecar/temporal')).nlink).toBeGreaterThan(1);
    expect(fs.statSync(path.join(linked, 'environment/sidecar/temporal')).mode & 0o111).toBeTruthy();
  });
});

test('quotes, newlines, $() and backticks round-trip through TOML, YAML and shell', async () => {
  const description = 'He said "hi" \\ and\nthen $(rm -rf /) `whoami` \'single\'';
  const paths = ['dir with space', "it's", '$(touch pwned)', 'back`tick`'];
  const out = path.join(tempDir(), 'task');
  await buildLinked(writeConfig(modeB({ description, read_only_paths: paths, secrets: [] })), out);
  expect((parseToml(fs.readFileSync(path.join(out, 'task.toml'), 'utf8')) as { task: { description: string } }).task.description).toBe(
    description,
  );
  const seed = fs.readFileSync(path.join(out, 'environment/main/seed.sh'), 'utf8');
  const loop = seed.split('\n').find((l) => l.startsWith('for p in '))!;
  const listed = execFileSync('bash', ['-c', `${loop} printf '%s\\n' "$p"; done`], { encoding: 'utf8', cwd: tempDir() });
  expect(listed.trim().split('\n')).toEqual(paths.map((p) => `/workspace/agent/${p}`));
  expect(fs.readFileSync(path.join(out, 'instruction.md'), 'utf8')).toContain('$(rm -rf /)');
});

describe('rules that vero review taught', () => {
  test('unknown keys name their path', async () => {
    expect(await buildError(modeB({ targets: [{ split: 'test', rewardkey: 'x' }] }))).toMatch(
      /build\.yaml: targets\.0\.rewardkey: unknown key \(did you mean reward_key\?\)$/,
    );
    expect(await buildError(modeB({ rescore_k: 2 }))).toMatch(/build\.yaml: rescore_k: unknown key$/);
  });

  test.each([
    [
      { budgets: [{ split: 'test', total_run_budget: 1 }] },
      'budgets.0.split: "test" is no_access; a budget would let the agent evaluate a hidden split',
    ],
    [
      { budgets: [{ split: 'dev', total_run_budget: 1 }] },
      'budgets.0.split: split "dev" is not declared in splits (declared: train, validation, test)',
    ],
    [{ targets: [{ split: 'holdout' }] }, 'targets.0.split: split "holdout" is not declared in splits'],
    [{ selection_split: 'test' }, 'selection_split: "test" is no_access; it must be a split the agent can evaluate'],
    [{ harbor: undefined }, 'harbor: required in mode B'],
    [{ dataset: 'x' }, 'dataset: only valid in mode A'],
    [
      { partition: { train: ['hello-world'], validation: ['nope'], test: ['add-cli-flag'] } },
      'partition.validation: unknown task name(s) nope',
    ],
    [{ secrets: ['BAD-NAME'] }, 'secrets.0: expected an environment variable name'],
    [{ secrets: ['A', 'A'] }, 'secrets: names must be unique'],
    [{ read_only_paths: ['../outside'] }, 'read_only_paths.0: expected a relative path inside the agent repo'],
    [{ read_only_paths: ['/etc'] }, 'read_only_paths.0: expected a relative path inside the agent repo'],
    [{ read_only_paths: ['tests/**', '!tests/x'] }, 'read_only_paths.1: negated globs are not supported'],
    [{ budgets: [{ split: 'train' }] }, 'budgets.0: expected total_run_budget and/or total_sample_budget'],
    [{ harbor: { extra_args: ['--n-attempts', '5'] } }, 'harbor.extra_args: --n-attempts is set by vero-harbor from typed fields'],
    [{ harbor: { n_atempts: 2 } }, 'harbor.n_atempts: unknown key (did you mean n_attempts?)'],
    [{ reward_mode: 'submit' }, 'reward_mode: submit needs submit_enabled: true'],
    [{ baseline_selection_score: 0.5 }, 'baseline_selection_score: only used by the baseline floor'],
    [{ objective: { direction: 'minimize' } }, 'objective.failure_value: required to minimise'],
    [{ targets: [{ split: 'test', n_attempts: 0 }] }, 'targets.0.n_attempts: Too small: expected number to be >=1'],
    [{ targets: [{ split: 'test', baseline_reward: 'high' }] }, 'targets.0.baseline_reward: Invalid input: expected number'],
    [{ mode: 'A', auto_best_race: {} }, 'auto_best_race: only in mode B'],
    [{ auto_best_race: {}, objective: { direction: 'minimize', failure_value: 9 } }, 'auto_best_race: a race ranks rewards in [0, 1]'],
    [{ auto_best_race: { confidence: 0.4 } }, 'auto_best_race.confidence: Too small: expected number to be >0.5'],
    [{ eval_early_stop: { confidence: 1 } }, 'eval_early_stop.confidence: Too big: expected number to be <1'],
    [{ eval_early_stop: { margin: -0.1 } }, 'eval_early_stop.margin: Too small: expected number to be >=0'],
    [
      { mode: 'A', harness: { dir: '/tmp', command: ['python', '{harness}/evaluate.py'] }, eval_early_stop: {} },
      'eval_early_stop: not with a command harness',
    ],
    [{ eval_early_stop: { running: 'pause' } }, 'eval_early_stop.running: Invalid option: expected one of "stop"|"finish"'],
  ])('%j is refused', async (over, message) => {
    expect(await buildError(modeB(over as Record<string, unknown>))).toContain(message);
  });

  test('missing secrets are listed by name before anything is written; the flag skips the check', async () => {
    const out = path.join(tempDir(), 'task');
    const file = writeConfig(modeB({ secrets: ['VERO_MISSING_ONE', 'VERO_MISSING_TWO'] }));
    expect(await buildError(file, out, { skipSecretCheck: false })).toContain(
      'secrets missing from the host environment: VERO_MISSING_ONE, VERO_MISSING_TWO',
    );
    expect(fs.existsSync(out)).toBe(false);
    await buildLinked(file, out, { skipSecretCheck: true });
    expect(fs.existsSync(path.join(out, 'task.toml'))).toBe(true);
  });

  test('the baseline is the committed HEAD of a subdirectory: no uncommitted edits, no files outside it', async () => {
    const root = path.join(tempDir(), 'mono');
    fs.mkdirSync(path.join(root, 'agents', 'mine'), { recursive: true });
    fs.writeFileSync(path.join(root, 'agents', 'mine', 'agent.py'), 'v1\n');
    fs.writeFileSync(path.join(root, 'other.txt'), 'not the agent\n');
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '-m', 'c1');
    fs.writeFileSync(path.join(root, 'agents', 'mine', 'agent.py'), 'uncommitted\n');
    fs.writeFileSync(path.join(root, 'agents', 'mine', 'new.py'), 'untracked\n');
    const out = path.join(tempDir(), 'task');
    await buildLinked(writeConfig(modeB({ secrets: [] }, path.join(root, 'agents', 'mine'))), out);
    const base = path.join(out, 'environment', 'agent-baseline');
    expect(fs.readdirSync(base).filter((f) => f !== '.git')).toEqual(['agent.py']);
    expect(fs.readFileSync(path.join(base, 'agent.py'), 'utf8')).toBe('v1\n');
  });

  test('a repo without commits, or a failing archive, fails with the git error in the message', async () => {
    const empty = path.join(tempDir(), 'empty');
    fs.mkdirSync(empty);
    git(empty, 'init', '-q');
    expect(await buildError(modeB({ secrets: [] }, empty))).toMatch(
      /agent_repo has no committed HEAD: git -C .* log .* failed \(exit 128\): fatal: bad revision 'HEAD\^\{commit\}'/,
    );
    // A subdirectory that exists only in the working tree: git archive itself fails, and its error is reported.
    const repo = agentRepo();
    fs.mkdirSync(path.join(repo, 'uncommitted'));
    fs.writeFileSync(path.join(repo, 'uncommitted', 'x.py'), 'x\n');
    expect(await buildError(modeB({ secrets: [] }, path.join(repo, 'uncommitted')))).toMatch(
      /git -C \S+ archive --format=tar [0-9a-f]{40}:uncommitted failed \(exit 128\): fatal: not a valid object name/,
    );
    const notGit = tempDir();
    expect(await buildError(modeB({ secrets: [] }, notGit))).toContain('is not inside a git repository');
  });

  test('links that escape the baseline are refused, not rewritten', async () => {
    for (const target of ['/etc/passwd', '../../outside']) {
      const repo = path.join(tempDir(), 'linky');
      fs.mkdirSync(repo);
      fs.writeFileSync(path.join(repo, 'ok.txt'), 'ok\n');
      fs.symlinkSync(target, path.join(repo, 'escape'));
      git(repo, 'init', '-q');
      git(repo, 'add', '-A');
      git(repo, 'commit', '-q', '-m', 'c');
      const out = path.join(tempDir(), 'task');
      expect(await buildError(modeB({ secrets: [] }, repo), out)).toContain(
        `refusing to extract the agent repo archive: escape -> ${target}: link points outside the baseline`,
      );
      expect(fs.existsSync(out)).toBe(false);
    }
  });

  test('a failed build leaves the previous output untouched and no temp dirs; a non-build dir is never replaced', async () => {
    const parent = tempDir();
    const out = path.join(parent, 'task');
    await buildLinked(writeConfig(modeB({ secrets: [] })), out);
    const before = fs.readFileSync(path.join(out, MANIFEST), 'utf8');
    const empty = path.join(tempDir(), 'empty');
    fs.mkdirSync(empty);
    git(empty, 'init', '-q');
    await buildError(modeB({ secrets: [] }, empty), out);
    expect(fs.readFileSync(path.join(out, MANIFEST), 'utf8')).toBe(before);
    expect(fs.readdirSync(parent)).toEqual(['task']);
    // A rebuild replaces a previous build output...
    await buildLinked(writeConfig(modeB({ secrets: [], description: 'second' })), out);
    expect(fs.readFileSync(path.join(out, 'task.toml'), 'utf8')).toContain('second');
    expect(fs.readdirSync(parent)).toEqual(['task']);
    // ...but never a directory that is not one.
    const precious = path.join(tempDir(), 'precious');
    fs.mkdirSync(precious);
    fs.writeFileSync(path.join(precious, 'keep.txt'), 'keep');
    expect(await buildError(modeB({ secrets: [] }), precious)).toContain(
      'exists and is not a vero build output (no .vero-build.json); refusing to replace it',
    );
    expect(fs.readFileSync(path.join(precious, 'keep.txt'), 'utf8')).toBe('keep');
  });

  test('mode A keeps the scorer out of the agent repo and needs a dataset file per split', async () => {
    const repo = agentRepo();
    const base = {
      name: 'acme/a',
      agent_repo: repo,
      mode: 'A',
      dataset: path.join(ROOT, 'examples/mode-a/dataset'),
      inference: { command: 'python3 infer.py' },
      splits: [
        { split: 'train', access: 'viewable' },
        { split: 'test', access: 'no_access' },
      ],
      budgets: [{ split: 'train', total_run_budget: 2 }],
      selection_split: 'train',
      targets: [{ split: 'test' }],
    };
    expect(await buildError({ ...base, scorer: { dir: repo, command: 'python3 score.py' } })).toContain(
      "is inside agent_repo; the trusted scorer must not come from the agent's repo",
    );
    expect(
      await buildError({
        ...base,
        scorer: { dir: path.join(ROOT, 'examples/mode-a/scorer'), command: 'x' },
        splits: [...base.splits, { split: 'dev', access: 'viewable' }],
      }),
    ).toContain('dataset: no dev.jsonl');
    expect(await buildError({ ...base })).toContain('scorer: required in mode A');
  });
});

const dockerImagesAvailable = spawnSync('docker', ['image', 'inspect', 'vero-base:bookworm'], { stdio: 'ignore' }).status === 0;
if (!dockerImagesAvailable)
  console.warn('*** skipped "both examples build": examples/mode-b preloads vero-base:bookworm (run scripts/ensure-docker) ***');

describe('the nested environment of a mode B task', () => {
  test('a remote environment: no engine in the sidecar, -e/--ek and the declared secrets reach the nested harbor only', async () => {
    const out = path.join(tempDir(), 'task');
    const r = await buildLinked(
      writeConfig(
        modeB({
          harbor: { agent: 'agent:SkillAgent', environment: 'modal', environment_kwargs: { app_name: 'bench' } },
          secrets: ['MODAL_TOKEN_ID', 'MODAL_TOKEN_SECRET'],
        }),
      ),
      out,
      { skipSecretCheck: true },
    );
    expect(r.warnings).toEqual([]);
    const compose = parseYaml(fs.readFileSync(path.join(out, 'environment/docker-compose.yaml'), 'utf8')) as {
      services: Record<string, Record<string, unknown>>;
      volumes: Record<string, unknown>;
    };
    const sidecar = compose.services['eval-sidecar']!;
    expect(sidecar.command).toEqual(['vero', 'serve', '--config', '/opt/serve.json']);
    for (const k of ['privileged', 'cap_add', 'security_opt', 'cgroup']) expect(sidecar).not.toHaveProperty(k);
    expect(Object.keys(sidecar.environment as object).sort()).toEqual(['MODAL_TOKEN_ID', 'MODAL_TOKEN_SECRET', 'VERO_HOME']);
    expect((compose.services.main as { environment: Record<string, string> }).environment).toMatchObject({
      MODAL_TOKEN_ID: '',
      MODAL_TOKEN_SECRET: '',
    });
    expect(compose.volumes).not.toHaveProperty('sidecar_docker');
    for (const f of ['start.sh', 'nested-images.tar']) expect(fs.existsSync(path.join(out, 'environment/sidecar', f))).toBe(false);
    expect(fs.readFileSync(path.join(out, 'environment/sidecar/Dockerfile'), 'utf8')).not.toContain('docker.io');
    const serve = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(out, 'environment/sidecar/serve.json'), 'utf8')));
    expect(serve.mode_b!.harbor).toMatchObject({ environment: 'modal', environment_kwargs: { app_name: 'bench' } });
    expect(serve.secrets).toEqual(['MODAL_TOKEN_ID', 'MODAL_TOKEN_SECRET']);
  });

  test('docker: the inner tasks’ FROM images not preloaded are named; nested_docker is refused for a remote environment', async () => {
    const r = await buildLinked(writeConfig(modeB({ secrets: [] })), path.join(tempDir(), 'task'));
    expect(r.warnings).toEqual([
      "the inner tasks build FROM vero-base:bookworm, not in nested_docker.preload_images: the sidecar's engine will pull them from a registry",
    ]);
    expect(
      await buildError(modeB({ harbor: { agent: 'a:B', environment: 'daytona' }, nested_docker: { preload_images: ['x'] } })),
    ).toContain('nested_docker: only for the nested environment docker (harbor.environment is "daytona")');
    expect(await buildError(modeB({ nested_docker: { preload_images: ['vero-no-such-image:1', 'vero-nor-this:2'] } }))).toContain(
      'nested_docker.preload_images: not in the local Docker engine: vero-no-such-image:1, vero-nor-this:2',
    );
  });
});

test('agent_ref picks the baseline commit; an unknown ref is a config error naming the field', async () => {
  const repo = agentRepo();
  const out = path.join(tempDir(), 'task');
  const r = await buildLinked(writeConfig(modeB({ secrets: [], agent_ref: 'baseline' }, repo)), out);
  expect(r.sourceCommit).toBe(git(repo, 'rev-parse', 'baseline'));
  expect(fs.existsSync(path.join(out, 'environment/agent-baseline/skills/sum.sh'))).toBe(false); // only in `improved`
  expect(await buildError(modeB({ secrets: [], agent_ref: 'no-such-tag' }, repo))).toMatch(
    /agent_ref: "no-such-tag" is not a commit of agent_repo/,
  );
  expect(await buildError(modeB({ secrets: [], agent_ref: '--upload-pack=x' }, repo))).toContain('agent_ref');
});

(dockerImagesAvailable ? test : test.skip)('both examples build (mode A and mode B)', async () => {
  const dir = tempDir();
  fs.cpSync(path.join(ROOT, 'examples'), dir, { recursive: true, filter: (s) => !s.includes(`${path.sep}agent-repo`) });
  agentRepo(dir);
  for (const mode of ['mode-a', 'mode-b']) {
    const out = path.join(dir, 'out', mode);
    const r = await buildLinked(path.join(dir, mode, 'build.yaml'), out, { skipSecretCheck: true });
    expect(r.mode).toBe(mode === 'mode-a' ? 'A' : 'B');
    ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(out, 'environment/sidecar/serve.json'), 'utf8')));
  }
  expect(fs.existsSync(path.join(dir, 'out', 'mode-a', 'environment/sidecar/scorer/score.py'))).toBe(true);
  expect(fs.existsSync(path.join(dir, 'out', 'mode-a', 'environment/sidecar/dataset/test.jsonl'))).toBe(true);
});

test('the compiler activity carries paths and names only, and maps config errors to non-retryable failures', async () => {
  process.env.VERO_TEST_SECRET_A = SECRET_VALUE;
  try {
    const env = new MockActivityEnvironment();
    const out = path.join(tempDir(), 'task');
    const result = await env.run(compileActivity, { configFile: writeConfig(modeB()), outDir: out });
    expect(JSON.stringify(result)).not.toContain(SECRET_VALUE);
    expect(result).toMatchObject({ outDir: out, mode: 'B', taskName: 'acme/opt-task' });
    const err = await new MockActivityEnvironment()
      .run(compileActivity, { configFile: writeConfig(modeB({ bogus: 1 })), outDir: out })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'ConfigError', nonRetryable: true });
  } finally {
    delete process.env.VERO_TEST_SECRET_A;
  }
});

test('vero build --address: the compiler runs as the buildTask workflow on a worker; a repeated build has the same id; bad input exits 2', async () => {
  process.env.VERO_TEST_SECRET_A = SECRET_VALUE;
  const q = uniqueQueue('build');
  const out = path.join(tempDir(), 'task');
  const config = writeConfig(modeB());
  const args = ['build', '-c', config, '-o', out, '--address', address(), '--task-queue', q, '--json'];
  try {
    await withWorker(q, async () => {
      const first = await runVero(args);
      expect(first.stderr).toMatch(/build workflow build-[0-9a-f]{20} on task queue/);
      expect(first.code).toBe(0);
      const r = conforming<{ workflowId: string; outDir: string; mode: string }>('build', first.stdout);
      expect(r).toMatchObject({ outDir: out, mode: 'B' });
      expect(fs.existsSync(path.join(out, MANIFEST))).toBe(true);
      // The workflow's history holds the compiler activity, and no secret value.
      const history = await (await client()).workflow.getHandle(r.workflowId).fetchHistory();
      const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes);
      expect(scheduled.map((e) => e.activityTaskScheduledEventAttributes!.activityType!.name)).toEqual(['compileTaskDir']);
      expect(JSON.stringify(history)).not.toContain(SECRET_VALUE);
      const again = await runVero(args);
      expect(again.code).toBe(0);
      expect((JSON.parse(again.stdout) as { workflowId: string }).workflowId).toBe(r.workflowId);
      const bad = await runVero(['build', '-c', writeConfig(modeB({ bogus: 1 })), '-o', out, '--address', address(), '--task-queue', q]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/bogus: unknown key/);
    });
  } finally {
    delete process.env.VERO_TEST_SECRET_A;
  }
});

describe('a task with an inference gateway', () => {
  const gateway = {
    upstreams: { anthropic: { base_url: 'https://api.anthropic.com', key_env: 'VERO_TEST_ANTHROPIC_KEY' } },
    scopes: {
      producer: { models: ['claude-x'], max_output_tokens: 100000 },
      evaluation: { models: ['claude-x'], aliases: { fast: 'claude-x' } },
    },
  };

  test('the sidecar alone gets the key; main has every declared name blanked and the gateway URL; vero run supplies the producer token', async () => {
    const out = path.join(tempDir(), 'task');
    const r = await buildLinked(writeConfig(modeB({ gateway })), out, { skipSecretCheck: true });
    expect(r.gateway).toBe(true);
    const compose = parseYaml(fs.readFileSync(path.join(out, 'environment/docker-compose.yaml'), 'utf8')) as {
      services: Record<string, { environment: Record<string, string> }>;
    };
    const main = compose.services.main!.environment;
    expect(main).toMatchObject({ VERO_TEST_ANTHROPIC_KEY: '', VERO_TEST_SECRET_A: '', VERO_GATEWAY_URL: 'http://eval-sidecar:8001' });
    const sidecar = compose.services['eval-sidecar']!.environment;
    expect(sidecar.VERO_TEST_ANTHROPIC_KEY).toMatch(/^\$\{VERO_TEST_ANTHROPIC_KEY:\?/);
    expect(sidecar.VERO_GATEWAY_PRODUCER_TOKEN_SHA256).toMatch(/^\$\{VERO_GATEWAY_PRODUCER_TOKEN_SHA256:\?start this task with `vero run`/);
    const serve = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(out, 'environment/sidecar/serve.json'), 'utf8')));
    // Nested docker: the candidates' containers reach the gateway at the nested bridge's fixed address.
    expect(serve.gateway).toMatchObject({ port: 8001, candidate_base_url: 'http://10.213.0.1:8001' });
    expect(fs.readFileSync(path.join(out, 'environment/sidecar/start.sh'), 'utf8')).toContain('--bip 10.213.0.1/24');
    expect(JSON.stringify(serve)).not.toMatch(/sk-|"key":/);

    // vero run --print: the digest for the sidecar, the token for the optimizer's agent, the user's args after.
    const printed = await runVero(['run', out, '--print', '--', '-a', 'oracle', '-e', 'docker']);
    expect(printed.code).toBe(0);
    const [exportLine, command] = printed.stdout.trim().split('\n');
    const digest = /^export VERO_GATEWAY_PRODUCER_TOKEN_SHA256=([0-9a-f]{64})$/.exec(exportLine!)?.[1];
    expect(digest).toBeDefined();
    const token = /ANTHROPIC_API_KEY=(vero-producer-[A-Za-z0-9_-]+)/.exec(command!)?.[1];
    expect(createHash('sha256').update(token!).digest('hex')).toBe(digest);
    expect(command).toContain('--ae ANTHROPIC_BASE_URL=http://eval-sidecar:8001');
    expect(command).toMatch(/-a oracle -e docker$/);
    expect(command).not.toContain('OPENAI'); // no openai upstream, no openai variables
    // One outer-trial retry, on a lost sandbox connection only; no tool-call cap for a harness without one.
    expect(command).toContain('--max-retries 1 --retry-include StreamTerminatedError --retry-include ConnectionError -a oracle');
    expect(command).not.toContain('TIMEOUT_MS');
    // A known harness gets its tool-call cap (overridable, or off), before the user's arguments (which win).
    const claude = (await runVero(['run', out, '--print', '--tool-timeout', '120', '--', '-a', 'claude-code', '-e', 'docker'])).stdout;
    expect(claude).toContain('--ae BASH_DEFAULT_TIMEOUT_MS=120000 --ae BASH_MAX_TIMEOUT_MS=120000 --max-retries 1');
    const opencode = (await runVero(['run', out, '--print', '--outer-retries', '0', '--', '--agent', 'opencode'])).stdout;
    expect(opencode).toContain('--ae OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS=300000 --agent opencode');
    expect(opencode).not.toContain('--max-retries');
    expect((await runVero(['run', out, '--print', '--tool-timeout', '0', '--', '-a', 'claude-code'])).stdout).not.toContain('TIMEOUT_MS');
    // No harbor to start: the launch decision table's ending, with the failure table's exit code (HarborNotFound: 2).
    const missing = await runVero(['run', out, '--harbor', '/nonexistent/harbor', '--', '-a', 'oracle']);
    expect(missing.stderr).toBe('error: harbor launcher not found: "/nonexistent/harbor" (--harbor); is Harbor installed and on PATH?\n');
    expect(missing.code).toBe(2);
  });

  test('a gateway key listed in secrets, port 8000 and a bad upstream are refused, all at once', async () => {
    const msg = await buildError(
      modeB({
        secrets: ['VERO_TEST_ANTHROPIC_KEY'],
        gateway: { ...gateway, port: 8000, upstreams: { ...gateway.upstreams, openai: { base_url: 'ftp://x', key_env: 'K' } } },
      }),
    );
    expect(msg).toContain('gateway.upstreams.openai.base_url');
    const msg2 = await buildError(modeB({ secrets: ['VERO_TEST_ANTHROPIC_KEY'], gateway: { ...gateway, port: 8000 } }));
    expect(msg2).toContain("secrets: VERO_TEST_ANTHROPIC_KEY is the gateway's upstream key");
    expect(msg2).toContain('gateway.port: 8000 is the eval sidecar API');
  });
});
