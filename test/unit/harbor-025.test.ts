/**
 * What Harbor 0.25 changed, at the level of pure functions: task discovery, kwargs round-trips, refused
 * flags, start-failure classification, Docker leftover names, exception messages, usage, bounds.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { composeProjectPrefix } from '../../infra/docker';
import { harborEnv } from '../../harbor/process-env';
import { classifyStartFailure } from '../../harbor/launch-decision';
import { collate, loadTrials } from '../../harbor/collate';
import { EvalConfigFile } from '../../model/evaluation/config';
import { kwargItem, preflightArgv } from '../../model/harbor/argv';
import { HarborSection } from '../../model/harbor/config';
import { listDataset, notATaskBecause } from '../../harbor/task-dir';
import { DEFAULT_HARBOR_VERSION, HARBOR_VERSION, SUPPORTED_HARBOR_VERSIONS } from '../../model/harbor/version';
import { listSource, resolvedRegistryFile } from '../../harbor/task-source';
import { ConfigError } from '../../model/errors';
import { LoadedTrial, scoreTask } from '../../model/harbor/trial-ranking';
import { ROOT, tempDir } from '../helpers/fixtures';

function write(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
}

test('task dirs are found the way Harbor 0.25 finds them, and every other dir is named with its reason', () => {
  const ds = tempDir();
  write(ds, {
    'classic/task.toml': '',
    'classic/environment/Dockerfile': 'FROM x',
    'classic/instruction.md': 'x',
    'classic/tests/test.sh': '',
    'image-only/task.toml': '[environment]\ndocker_image = "img"\n',
    'image-only/instruction.md': 'x',
    'image-only/tests/test.sh': '',
    'steps/task.toml': '[environment]\ndocker_image = "img"\n[[steps]]\nname = "a"\n[[steps]]\nname = "b"\n',
    'steps/steps/a/instruction.md': 'x',
    'steps/steps/a/tests/test.sh': '',
    'steps/steps/b/instruction.md': 'x',
    'steps/tests/test.sh': '',
    'windows/task.toml': '[environment]\ndocker_image = "img"\nos = "windows"\n',
    'windows/instruction.md': 'x',
    'windows/tests/test.bat': '',
    '.hidden/task.toml': '[environment]\ndocker_image = "img"\n',
    '.hidden/instruction.md': 'x',
    '.hidden/tests/test.sh': '',
    'no-env/task.toml': '',
    'no-env/instruction.md': 'x',
    'no-env/tests/test.sh': '',
    'step-missing/task.toml': '[environment]\ndocker_image = "img"\n[[steps]]\nname = "a"\n',
    'step-missing/tests/test.sh': '',
    'bad-name/task.toml': '[task]\nname = "no-slash"\n[environment]\ndocker_image = "img"\n',
    'bad-toml/task.toml': '[[[',
    'notes/README.md': 'x',
  });
  const listing = listDataset(ds);
  expect(listing.tasks).toEqual(['.hidden', 'classic', 'image-only', 'steps', 'windows']);
  expect(Object.fromEntries(listing.skipped.map((s) => [s.dir, s.reason]))).toEqual({
    'bad-name': '[task] name "no-slash" is not org/name',
    'bad-toml': expect.stringMatching(/^task\.toml does not parse/),
    'no-env': 'no environment/ dir and no [environment] docker_image',
    notes: 'no task.toml',
    'step-missing': 'no steps/a/instruction.md',
  });
  expect(notATaskBecause(path.join(ds, 'classic'))).toBeNull();
});

test('a symlinked task dir is a task (Harbor follows it); a dangling link or a loop is not a dir, and a looping source path is a config error', () => {
  const ds = tempDir();
  const elsewhere = tempDir();
  write(elsewhere, { 'real/task.toml': '[environment]\ndocker_image = "img"\n', 'real/instruction.md': 'x', 'real/tests/test.sh': '' });
  fs.symlinkSync(path.join(elsewhere, 'real'), path.join(ds, 'linked'));
  fs.symlinkSync(path.join(elsewhere, 'nowhere'), path.join(ds, 'dangling'));
  fs.symlinkSync(path.join(ds, 'loop-b'), path.join(ds, 'loop-a'));
  fs.symlinkSync(path.join(ds, 'loop-a'), path.join(ds, 'loop-b'));
  expect(listDataset(ds)).toEqual({ tasks: ['linked'], skipped: [] });
  expect(() => listSource({ path: path.join(ds, 'loop-a') })).toThrow(
    new ConfigError(`tasks.source.path: ${path.join(ds, 'loop-a')} cannot be read (ELOOP: a symlink loop)`),
  );
});

test('dot-named task dirs are collated like any other (their trial dirs start with a dot too)', () => {
  const jobs = tempDir();
  write(jobs, {
    'job/config.json': '{}',
    'job/lock.json': '{}',
    'job/.hidden__abc/result.json': JSON.stringify({
      task_name: '.hidden',
      trial_name: '.hidden__abc',
      task_id: { path: '/ds/.hidden' },
      verifier_result: { rewards: { reward: 1 } },
    }),
  });
  const rows = collate(loadTrials(jobs).trials, { requested: ['.hidden'] });
  expect(rows[0]).toMatchObject({ task: '.hidden', status: 'scored', score: 1 });
});

test('kwargs reach Harbor with their YAML type: strings that parse_kwargs would convert are JSON-quoted', () => {
  expect(kwargItem('a', 'hello')).toBe('a=hello');
  expect(kwargItem('a', 'gpt-4o mini')).toBe('a=gpt-4o mini');
  for (const s of ['true', '007', '[1]', '1.5', 'null', 'True', 'False', 'None', 'NaN', '-Infinity', ' padded', '', '{"x":1}', '"q"']) {
    const item = kwargItem('a', s);
    expect(JSON.parse(item.slice(2))).toBe(s); // Harbor's json.loads gives the string back
  }
  expect(kwargItem('n', 7)).toBe('n=7');
  expect(kwargItem('b', true)).toBe('b=true');
  expect(kwargItem('z', null)).toBe('z=null');
});

test('extra_args that stop trials from running or being scored are refused by name; the preflight adds --dry-run itself', () => {
  for (const flag of ['--dry-run', '--launch', '--install-only', '--disable-verification', '--diff']) {
    const r = HarborSection.safeParse({ extra_args: ['--debug', flag] });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toContain(flag);
    expect(r.error!.issues[0]!.path).toEqual(['extra_args']);
  }
  const argv = preflightArgv({
    harbor: HarborSection.parse({}),
    source: { path: '/ds' },
    task: 't',
    jobsDir: '/j',
    jobName: 't',
    worktree: '/w',
  });
  expect(argv.at(-1)).toBe('--dry-run');
});

test('why harbor stopped before its job: Docker down is infrastructure, a lock mismatch is a stale job, the rest is config', () => {
  expect(classifyStartFailure('Docker daemon is not running. Please start Docker and try again.\n').kind).toBe('infrastructure');
  expect(classifyStartFailure('Cannot connect to the Docker daemon at unix:///x.sock. Is the docker daemon running?').kind).toBe(
    'infrastructure',
  );
  const stale = classifyStartFailure(
    'Traceback...\nFileExistsError: Job directory /j/t already has a lock.json that does not match the resolved job lock.\n',
  );
  expect(stale).toEqual({
    kind: 'stale-job',
    reason: 'Job directory /j/t already has a lock.json that does not match the resolved job lock.',
  });
  expect(
    classifyStartFailure('FileExistsError: Job directory /j/t already exists and cannot be resumed with a different config.').kind,
  ).toBe('stale-job');
  // A full disk while Harbor writes its job is the host's condition (waited for), never a config error.
  expect(classifyStartFailure("OSError: [Errno 28] No space left on device: '/h/runs/j/lock.json'\n")).toEqual({
    kind: 'disk-full',
    reason: "OSError: [Errno 28] No space left on device: '/h/runs/j/lock.json'",
  });
  expect(classifyStartFailure('Error: ENOSPC: no space left on device, write').kind).toBe('disk-full');
  const config = classifyStartFailure('ValueError: No tasks matched the filter(s) ["x"].\n');
  expect(config).toEqual({ kind: 'config', reason: 'ValueError: No tasks matched the filter(s) ["x"].' });
});

test('harbor runs with the candidate on PYTHONPATH and the offline cost-map switch; harbor.env wins, the job marker is ours', () => {
  const settings = {
    harbor: HarborSection.parse({ env: { PYTHONPATH: '/extra', LITELLM_LOCAL_MODEL_COST_MAP: 'False', VERO_HARBOR_JOB_DIR: 'x' } }),
  } as Parameters<typeof harborEnv>[0];
  expect(harborEnv(settings, '/wt', '/jobs/t')).toEqual({
    PYTHONPATH: `/wt${path.delimiter}/extra`,
    LITELLM_LOCAL_MODEL_COST_MAP: 'False',
    VERO_HARBOR_JOB_DIR: '/jobs/t',
  });
  // A src layout: the checkout's dirs named by harbor.python_path, in order, instead of its root.
  const src = { harbor: HarborSection.parse({ python_path: ['src', 'lib/py'] }) } as Parameters<typeof harborEnv>[0];
  expect(harborEnv(src, '/wt', '/jobs/t').PYTHONPATH?.split(path.delimiter).slice(0, 2)).toEqual(['/wt/src', '/wt/lib/py']);
  for (const bad of [['/abs'], ['../up'], ['a:b'], []]) expect(HarborSection.safeParse({ python_path: bad }).success).toBe(false);
});

test("Docker leftovers are matched by Harbor's compose project name of each trial", () => {
  expect(composeProjectPrefix('hello-world__AbC12xY')).toBe('hello-world__abc12xy__');
  expect(composeProjectPrefix('.hidden__Q')).toBe('0-hidden__q__');
  expect(composeProjectPrefix('a.b__Z')).toBe('a-b__z__');
});

const trial = (over: Record<string, unknown>): LoadedTrial => ({
  file: '/x',
  digest: String(Math.random()),
  result: { task_name: 't', trial_name: String(Math.random()), ...over } as LoadedTrial['result'],
});

test('error rows carry the first line of Harbor’s exception message; usage sums over all trials', () => {
  const r = scoreTask([
    trial({
      exception_info: { exception_type: 'RewardFileNotFoundError', exception_message: 'No reward file found at /logs/verifier\nmore' },
      agent_result: { cost_usd: 0.5, n_input_tokens: 100, n_output_tokens: 10, n_cache_tokens: null },
    }),
    trial({ exception_info: { exception_type: 'RuntimeError' }, agent_result: { cost_usd: 0.25, n_input_tokens: 50 } }),
  ]);
  expect(r.status).toBe('error');
  expect(r.error).toBe('no trial has verifier rewards (RewardFileNotFoundError: No reward file found at /logs/verifier; RuntimeError)');
  expect(r.usage).toEqual({ costUsd: 0.75, inputTokens: 150, outputTokens: 10, cacheTokens: null });
});

test('a non-finite score is an error with the reason, never a scored null', () => {
  const huge = [trial({ verifier_result: { rewards: { reward: 1e308 } } }), trial({ verifier_result: { rewards: { reward: 1e308 } } })];
  const mean = scoreTask(huge, { aggregate: 'mean' });
  expect(mean).toMatchObject({ status: 'error', score: null });
  expect(mean.error).toMatch(/not a finite number \(Infinity\)/);
});

test('durations that would overflow Node timers are refused; stop_grace and preflight have defaults', () => {
  const base = { agent_repo: '/r', tasks: { source: { path: '/d' } } };
  const r = EvalConfigFile.safeParse({ ...base, execution: { task_timeout: '600h' } });
  expect(r.success).toBe(false);
  expect(r.error!.issues[0]!.path).toEqual(['execution', 'task_timeout']);
  const ok = EvalConfigFile.parse(base);
  expect(ok.execution).toMatchObject({ stop_grace: 60, preflight: true, task_timeout: 7200 });
});

test('relative registry task paths are resolved against the registry file for harbor', () => {
  const dir = tempDir();
  const reg = path.join(dir, 'sub', 'registry.json');
  write(dir, {
    'sub/registry.json': JSON.stringify([
      {
        name: 'd',
        version: '1',
        tasks: [
          { name: 'a', path: 'tasks/a' },
          { name: 'b', path: '/abs/b' },
        ],
      },
    ]),
  });
  const out = resolvedRegistryFile(reg, path.join(dir, 'run'));
  const parsed = JSON.parse(fs.readFileSync(out, 'utf8')) as { tasks: { path: string }[] }[];
  expect(parsed[0]!.tasks.map((t) => t.path)).toEqual([path.join(dir, 'sub', 'tasks', 'a'), '/abs/b']);
});

test('the Harbor versions are pinned once: ensure-harbor installs the supported ones, 0.26 by default', () => {
  const script = fs.readFileSync(path.join(ROOT, 'scripts', 'ensure-harbor'), 'utf8');
  expect(script).toContain(`DEFAULT_HARBOR_VERSION="${DEFAULT_HARBOR_VERSION}"`);
  expect(script).toContain(`SUPPORTED_HARBOR_VERSIONS="${SUPPORTED_HARBOR_VERSIONS.join(' ')}"`);
  expect(SUPPORTED_HARBOR_VERSIONS).toContain(HARBOR_VERSION);
  const refused = spawnSync(path.join(ROOT, 'scripts', 'ensure-harbor'), ['0.24.0'], {
    encoding: 'utf8',
    env: { ...process.env, HARBOR_BIN: '' },
  });
  expect(refused.status).toBe(2);
  expect(refused.stderr).toMatch(/Harbor 0\.24\.0 is not a version vero-harbor supports \(supported: 0\.25\.0 0\.26\.0\)/);
});
