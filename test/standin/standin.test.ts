/**
 * The stand-in against reference/harbor.md: job layout, JSON field names/order/types, timestamp formats,
 * retries, resume, exit codes. If these drift, the stand-in is no longer Harbor.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HARBOR_VERSION } from '../../model/harbor/version';
import { DATASET, invocations, STANDIN, tempDir } from '../helpers/fixtures';

const TRIAL_NAME = /^(.{1,32})__([2-9A-HJ-NP-Za-km-z]{7})$/;
const UTC_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const NAIVE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function harbor(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Run {
  const r = spawnSync(STANDIN, args, {
    cwd: opts.cwd ?? tempDir(),
    env: { ...process.env, HARBOR_STANDIN_TIME_SCALE: '0', ...opts.env },
    input: opts.input ?? '',
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const readJson = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8')) as Record<string, unknown>;
const trialDirs = (job: string) =>
  fs
    .readdirSync(job, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => path.join(job, d.name))
    .sort();

test('a job writes the exact layout and Harbor field names, types and timestamp formats', () => {
  const jobs = tempDir();
  const r = harbor([
    'run',
    '-p',
    DATASET,
    '-i',
    'hello-world',
    '-i',
    'count-*',
    '-k',
    '2',
    '-a',
    'oracle',
    '-o',
    jobs,
    '--job-name',
    'j',
    '-y',
  ]);
  expect(r.code).toBe(0);
  const job = path.join(jobs, 'j');
  expect(
    fs
      .readdirSync(job)
      .filter((f) => !fs.statSync(path.join(job, f)).isDirectory())
      .sort(),
  ).toEqual(['config.json', 'job.log', 'lock.json', 'result.json']);
  const trials = trialDirs(job);
  expect(trials).toHaveLength(4);
  const t = trials[0]!;
  expect(path.basename(t)).toMatch(TRIAL_NAME);
  expect(fs.readdirSync(t).sort()).toEqual(['agent', 'artifacts', 'config.json', 'lock.json', 'result.json', 'trial.log', 'verifier']);
  expect(fs.readdirSync(path.join(t, 'verifier')).sort()).toEqual(['reward.txt', 'test-stdout.txt']);
  expect(fs.existsSync(path.join(t, 'artifacts', 'manifest.json'))).toBe(true);
  expect(fs.existsSync(path.join(t, 'agent', 'oracle.txt'))).toBe(true);

  const result = readJson(path.join(t, 'result.json'));
  expect(Object.keys(result)).toEqual([
    'id',
    'task_name',
    'trial_name',
    'trial_uri',
    'task_id',
    'source',
    'task_checksum',
    'config',
    'agent_info',
    'agent_result',
    'verifier_result',
    'verifier_environment_mode',
    'exception_info',
    'started_at',
    'finished_at',
    'environment_setup',
    'agent_setup',
    'agent_execution',
    'verifier',
    'step_results',
  ]);
  const dirName = path.basename(t).split('__')[0]!;
  expect(result.task_name).toBe(`mini-bench/${dirName}`); // [task].name, not the dir name
  expect(result.trial_name).toBe(path.basename(t));
  expect(result.trial_uri).toBe(`file://${t}`);
  expect(result.task_id).toEqual({ path: path.join(DATASET, dirName) });
  expect(result.source).toBe('mini-bench');
  expect(result.task_checksum).toMatch(/^[0-9a-f]{64}$/);
  expect(result.agent_info).toEqual({ name: 'oracle', version: '1.0.0', model_info: null });
  expect(result.agent_result).toEqual({
    n_input_tokens: null,
    n_cache_tokens: null,
    n_output_tokens: null,
    cost_usd: null,
    rollout_details: null,
    metadata: null,
  });
  expect(result.verifier_result).toEqual({ rewards: { reward: 1 } });
  expect(fs.readFileSync(path.join(t, 'result.json'), 'utf8')).toContain('"reward": 1.0'); // a float, as pydantic writes it
  expect(result.verifier_environment_mode).toBe('shared');
  expect(result.exception_info).toBeNull();
  for (const k of ['started_at', 'finished_at']) expect(result[k]).toMatch(UTC_Z);
  for (const k of ['environment_setup', 'agent_setup', 'agent_execution', 'verifier']) {
    const span = result[k] as Record<string, string>;
    expect(Object.keys(span)).toEqual(['started_at', 'finished_at']);
    expect(span.started_at).toMatch(UTC_Z);
  }
  const cfg = result.config as Record<string, unknown>;
  expect(Object.keys(cfg)).toEqual([
    'task',
    'trial_name',
    'trials_dir',
    'install_only',
    'timeout_multiplier',
    'agent_timeout_multiplier',
    'verifier_timeout_multiplier',
    'agent_setup_timeout_multiplier',
    'environment_build_timeout_multiplier',
    'agent',
    'user_agent',
    'environment',
    'verifier',
    'artifacts',
    'extra_instruction_paths',
    'extra_instructions',
    'job_id',
    'source_trial',
  ]);
  expect(Object.keys(cfg.task as object)).toEqual([
    'path',
    'git_url',
    'git_commit_id',
    'name',
    'ref',
    'overwrite',
    'download_dir',
    'source',
  ]);
  // Trial config.json is the same model with exclude_defaults.
  expect(readJson(path.join(t, 'config.json'))).toEqual({
    task: { path: path.join(DATASET, dirName), source: 'mini-bench' },
    trial_name: path.basename(t),
    trials_dir: job,
    agent: { name: 'oracle' },
    job_id: (readJson(path.join(job, 'result.json')) as { id: string }).id,
  });

  const jobResult = readJson(path.join(job, 'result.json'));
  expect(Object.keys(jobResult)).toEqual(['id', 'started_at', 'updated_at', 'finished_at', 'n_total_trials', 'stats']);
  expect(jobResult).not.toHaveProperty('trial_results');
  for (const k of ['started_at', 'finished_at']) expect(jobResult[k]).toMatch(NAIVE);
  const stats = jobResult.stats as Record<string, unknown>;
  expect(Object.keys(stats)).toEqual([
    'n_completed_trials',
    'n_errored_trials',
    'n_running_trials',
    'n_pending_trials',
    'n_cancelled_trials',
    'n_retries',
    'evals',
    'n_input_tokens',
    'n_cache_tokens',
    'n_output_tokens',
    'cost_usd',
  ]);
  expect(stats).toMatchObject({ n_completed_trials: 4, n_errored_trials: 0, n_running_trials: 0, n_pending_trials: 0, n_retries: 0 });
  const ev = (stats.evals as Record<string, Record<string, unknown>>)['oracle__mini-bench']!;
  expect(ev).toMatchObject({ n_trials: 4, n_errors: 0, metrics: [{ mean: 1 }], pass_at_k: { '2': 1 }, exception_stats: {} });
  expect(Object.keys((ev.reward_stats as Record<string, Record<string, string[]>>).reward!)).toEqual(['1.0']);
  const jobCfg = readJson(path.join(job, 'config.json'));
  // An explicit -a makes an agent config (exclude_defaults keeps only its name).
  expect(jobCfg).toEqual({
    job_name: 'j',
    jobs_dir: jobs,
    n_attempts: 2,
    agents: [{ name: 'oracle' }],
    datasets: [{ path: DATASET, task_names: ['hello-world', 'count-*'] }],
  });
  expect(readJson(path.join(job, 'lock.json'))).toMatchObject({
    schema_version: 3,
    harbor: { version: HARBOR_VERSION },
    n_concurrent_trials: 4,
  });
});

test('rewards, exceptions and reward-file failures follow the verifier rules', () => {
  const jobs = tempDir();
  const scenario = {
    tasks: {
      'hello-world': { rewards: { pass: 1, tests_passed: 7 } },
      'count-words': { exception: 'AgentTimeoutError', reward: 0 },
      'sum-numbers': { exception: 'RuntimeError', message: 'Docker compose command failed' },
      'reverse-string': { reward_file: 'missing' },
      'fix-csv-parser': { reward_file: 'empty' },
      'add-cli-flag': { reward_file: 'invalid' },
    },
  };
  expect(
    harbor(['run', '-p', DATASET, '-o', jobs, '--job-name', 'j', '-y', '-q'], {
      env: { HARBOR_STANDIN_SCENARIO: JSON.stringify(scenario) },
    }).code,
  ).toBe(0);
  const by = Object.fromEntries(
    trialDirs(path.join(jobs, 'j')).map((t) => [path.basename(t).split('__')[0]!, { dir: t, r: readJson(path.join(t, 'result.json')) }]),
  );
  expect(by['hello-world']!.r.verifier_result).toEqual({ rewards: { pass: 1, tests_passed: 7 } });
  expect(fs.existsSync(path.join(by['hello-world']!.dir, 'verifier', 'reward.json'))).toBe(true);
  // An agent timeout is recorded and the verifier still runs.
  expect(by['count-words']!.r).toMatchObject({
    verifier_result: { rewards: { reward: 0 } },
    exception_info: { exception_type: 'AgentTimeoutError' },
  });
  expect(fs.existsSync(path.join(by['count-words']!.dir, 'exception.txt'))).toBe(true);
  // An environment failure: no agent result, no verifier.
  expect(by['sum-numbers']!.r).toMatchObject({
    agent_result: null,
    verifier_result: null,
    agent_execution: null,
    exception_info: { exception_type: 'RuntimeError', exception_message: 'Docker compose command failed' },
  });
  expect((by['sum-numbers']!.r.exception_info as { occurred_at: string }).occurred_at).toMatch(UTC_Z);
  expect(by['reverse-string']!.r).toMatchObject({
    verifier_result: null,
    exception_info: {
      exception_type: 'RewardFileNotFoundError',
      exception_message: 'No reward file found at /logs/verifier/reward.txt or /logs/verifier/reward.json',
    },
  });
  expect((by['fix-csv-parser']!.r.exception_info as { exception_type: string }).exception_type).toBe('RewardFileEmptyError');
  expect((by['add-cli-flag']!.r.exception_info as { exception_type: string }).exception_type).toBe('VerifierOutputParseError');
  const stats = readJson(path.join(jobs, 'j', 'result.json')).stats as {
    n_errored_trials: number;
    evals: Record<string, { n_trials: number; n_errors: number; exception_stats: Record<string, string[]> }>;
  };
  expect(stats.n_errored_trials).toBe(5);
  const ev = stats.evals['oracle__mini-bench']!;
  expect(ev.n_trials).toBe(2);
  expect(Object.keys(ev.exception_stats).sort()).toEqual([
    'AgentTimeoutError',
    'RewardFileEmptyError',
    'RewardFileNotFoundError',
    'RuntimeError',
    'VerifierOutputParseError',
  ]);
});

test('retries delete the failed trial dir and reuse its name; excluded exceptions are not retried', () => {
  const jobs = tempDir();
  const state = tempDir();
  const scenario = {
    tasks: {
      'hello-world': [{ exception: 'RuntimeError' }, { exception: 'RuntimeError' }, { reward: 1 }],
      'count-words': { exception: 'AgentTimeoutError', reward: 0 },
    },
  };
  const env = { HARBOR_STANDIN_SCENARIO: JSON.stringify(scenario), HARBOR_STANDIN_STATE_DIR: state };
  expect(
    harbor(['run', '-p', DATASET, '-i', 'hello-world', '-i', 'count-words', '-r', '3', '-o', jobs, '--job-name', 'j', '-y', '-q'], { env })
      .code,
  ).toBe(0);
  const trials = trialDirs(path.join(jobs, 'j')).map((t) => path.basename(t));
  expect(trials).toHaveLength(2);
  const hello = readJson(path.join(jobs, 'j', trials.find((t) => t.startsWith('hello'))!, 'result.json'));
  expect(hello).toMatchObject({ verifier_result: { rewards: { reward: 1 } }, exception_info: null });
  const stats = readJson(path.join(jobs, 'j', 'result.json')).stats as { n_retries: number };
  expect(stats.n_retries).toBe(2); // AgentTimeoutError is in the default exclude list
  expect(fs.readFileSync(path.join(jobs, 'j', 'job.log'), 'utf8')).toMatch(/failed with RuntimeError; retrying in 1 s \(1\/3\)/);
});

test('re-running a job name resumes it: results kept, unfinished trials deleted and re-run under new names; a changed config is refused', () => {
  const jobs = tempDir();
  const args = ['run', '-p', DATASET, '-i', 'hello-world', '-i', 'count-words', '-o', jobs, '--job-name', 'j', '-y', '-q'];
  expect(harbor(args).code).toBe(0);
  const job = path.join(jobs, 'j');
  const [a, b] = trialDirs(job);
  fs.rmSync(path.join(b!, 'result.json')); // as if interrupted
  const id = readJson(path.join(job, 'result.json')).id;
  expect(harbor(args).code).toBe(0);
  const after = trialDirs(job);
  expect(after).toHaveLength(2);
  expect(after).toContain(a);
  expect(after).not.toContain(b);
  expect(readJson(path.join(job, 'result.json')).id).toBe(id);

  const changed = harbor([...args.slice(0, -1), '-n', '2', '-q']);
  expect(changed.code).toBe(1);
  expect(changed.stderr).toContain(`FileExistsError: Job directory ${job} already exists and cannot be resumed with a different config.`);
});

test('job resume deletes filtered exception types and re-runs them', () => {
  const jobs = tempDir();
  const state = tempDir();
  const env = {
    HARBOR_STANDIN_SCENARIO: JSON.stringify({ tasks: { 'hello-world': [{ exception: 'RuntimeError' }, { reward: 1 }] } }),
    HARBOR_STANDIN_STATE_DIR: state,
  };
  expect(harbor(['run', '-p', DATASET, '-i', 'hello-world', '-o', jobs, '--job-name', 'j', '-y', '-q'], { env }).code).toBe(0);
  const job = path.join(jobs, 'j');
  expect(harbor(['job', 'resume', '-p', job], { env }).code).toBe(0); // default filter CancelledError: nothing re-runs
  expect((readJson(path.join(trialDirs(job)[0]!, 'result.json')).exception_info as { exception_type: string }).exception_type).toBe(
    'RuntimeError',
  );
  expect(harbor(['job', 'resume', '-p', job, '-f', 'RuntimeError'], { env }).code).toBe(0);
  expect(trialDirs(job)).toHaveLength(1);
  expect(readJson(path.join(trialDirs(job)[0]!, 'result.json')).verifier_result).toEqual({ rewards: { reward: 1 } });
});

test('usage errors exit 2 with Click wording; config errors exit 1', () => {
  const bad = harbor(['run', '-p', DATASET, '--bogus']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toBe("Usage: harbor run [OPTIONS]\nTry 'harbor run -h' for help.\n\nError: No such option: --bogus\n");
  expect(harbor(['run', '-p', DATASET, '-k', 'x']).stderr).toContain(
    "Error: Invalid value for '-k' / '--n-attempts': 'x' is not a valid integer.",
  );
  expect(harbor(['run', '-p', DATASET, '-e', 'nosuch']).code).toBe(2);
  expect(harbor(['run', '-p', DATASET, '-n']).stderr).toContain("Error: Option '-n' requires an argument.");
  const noMatch = harbor(['run', '-p', DATASET, '-i', 'nope', '-y']);
  expect(noMatch.code).toBe(1);
  expect(noMatch.stderr).toMatch(/ValueError: No tasks matched the filter\(s\) \["nope"\]/);
  expect(harbor(['run', '-p', '/nonexistent', '-y']).code).toBe(1);
  expect(harbor(['run', '-i', 'x']).stderr).toContain('Cannot specify task filters without --path, --dataset or --task.');
  expect(harbor(['--version']).stdout).toBe(`${HARBOR_VERSION}\n`);
});

test('--print-config prints the JobConfig and runs nothing', () => {
  const jobs = tempDir();
  const r = harbor([
    'run',
    '-p',
    DATASET,
    '-a',
    'claude-code',
    '-m',
    'anthropic/claude-sonnet-4-5',
    '-n',
    '2',
    '--job-name',
    'run-42',
    '-o',
    jobs,
    '--print-config',
  ]);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({
    job_name: 'run-42',
    jobs_dir: jobs,
    n_concurrent_trials: 2,
    agents: [{ name: 'claude-code', model_name: 'anthropic/claude-sonnet-4-5' }],
    datasets: [{ path: DATASET }],
  });
  expect(fs.readdirSync(jobs)).toEqual([]);
});

test('a registry dataset is served from a local registry.json; names seen by -i are path basenames', () => {
  const dir = tempDir();
  const registry = path.join(dir, 'registry.json');
  fs.writeFileSync(
    registry,
    JSON.stringify([
      { name: 'bench', version: '1.0', description: '', tasks: [{ name: 'hw', path: path.join(DATASET, 'hello-world') }], metrics: [] },
    ]),
  );
  const jobs = tempDir();
  expect(
    harbor(['run', '-d', 'bench@1.0', '--registry-path', registry, '-i', 'hello-world', '-o', jobs, '--job-name', 'j', '-y', '-q']).code,
  ).toBe(0);
  const r = readJson(path.join(trialDirs(path.join(jobs, 'j'))[0]!, 'result.json'));
  expect(r.source).toBe('bench');
  expect(harbor(['run', '-d', 'org/bench', '-y']).code).toBe(1);
});

test('without -y, tasks that read host env vars prompt, and EOF aborts; a missing var exits 1', () => {
  const dataset = tempDir();
  fs.cpSync(path.join(DATASET, 'hello-world'), path.join(dataset, 'hello-world'), { recursive: true });
  fs.appendFileSync(path.join(dataset, 'hello-world', 'task.toml'), '\n[verifier.env]\nAPI_KEY = "${VERO_TEST_KEY}"\n');
  const jobs = tempDir();
  const args = ['run', '-p', dataset, '-o', jobs, '--job-name', 'j', '-q'];
  const noYes = harbor(args, { env: { VERO_TEST_KEY: 'x' } });
  expect(noYes.code).toBe(1);
  expect(noYes.stderr).toContain('Aborted!');
  const envWithout = { ...process.env };
  delete envWithout.VERO_TEST_KEY;
  const r = spawnSync(STANDIN, [...args, '-y'], { env: { ...envWithout, HARBOR_STANDIN_TIME_SCALE: '0' }, encoding: 'utf8' });
  expect(r.status).toBe(1);
  expect(r.stderr).toContain('Missing required environment variables: VERO_TEST_KEY');
  expect(harbor([...args, '-y'], { env: { VERO_TEST_KEY: 'x' } }).code).toBe(0);
});

test('a crash leaves the running trial without result.json and the job unfinished; SIGTERM records CancelledError', async () => {
  const jobs = tempDir();
  const crash = harbor(['run', '-p', DATASET, '-i', 'hello-world', '-o', jobs, '--job-name', 'c', '-y', '-q'], {
    env: { HARBOR_STANDIN_SCENARIO: '{"default":{"process":"crash"}}' },
  });
  expect(crash.code).toBe(-1); // killed by SIGKILL
  const t = trialDirs(path.join(jobs, 'c'))[0]!;
  expect(fs.existsSync(path.join(t, 'result.json'))).toBe(false);
  expect(readJson(path.join(jobs, 'c', 'result.json')).finished_at).toBeNull();

  const log = path.join(tempDir(), 'inv.jsonl');
  const child = spawn(STANDIN, ['run', '-p', DATASET, '-i', 'hello-world', '-o', jobs, '--job-name', 'h', '-y', '-q'], {
    env: { ...process.env, HARBOR_STANDIN_SCENARIO: '{"default":{"process":"hang"}}', HARBOR_STANDIN_LOG: log },
    stdio: 'ignore',
  });
  const job = path.join(jobs, 'h');
  for (
    let i = 0;
    i < 100 && !(fs.existsSync(job) && trialDirs(job).length > 0 && fs.existsSync(path.join(trialDirs(job)[0]!, 'trial.log')));
    i++
  )
    await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 200));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  child.kill('SIGTERM');
  expect(await exited).toBe(130); // Harbor 0.25: teardown, then exit 130
  const r = readJson(path.join(trialDirs(job)[0]!, 'result.json'));
  expect((r.exception_info as { exception_type: string }).exception_type).toBe('CancelledError');
  const jr = readJson(path.join(job, 'result.json'));
  expect(jr.finished_at).toBeNull();
  expect((jr.stats as { n_cancelled_trials: number }).n_cancelled_trials).toBe(1);
  const lines = invocations(log);
  expect(lines.map((l) => l.event)).toEqual(['start', 'end']);
  expect(lines[1]).toMatchObject({ exit_code: 130, job_dir: job });
});

test('without a scenario, outcomes follow the agent under test (oracle 1, nop 0, the profile beside the agent module on PYTHONPATH)', () => {
  const agentDir = tempDir();
  fs.writeFileSync(path.join(agentDir, 'agent.py'), 'class MiniAgent: ...\n');
  fs.writeFileSync(
    path.join(agentDir, 'harbor-standin-agent.json'),
    JSON.stringify({ solves: ['hello-*'], partial: { 'count-words': 0.25 } }),
  );
  // The working directory is not where agents come from (real Harbor imports them from sys.path).
  const cwd = tempDir();
  fs.writeFileSync(path.join(cwd, 'harbor-standin-agent.json'), JSON.stringify({ solves: ['*'] }));
  const jobs = tempDir();
  const score = (agent: string, job: string) => {
    expect(
      harbor(
        [
          'run',
          '-p',
          DATASET,
          '-i',
          'hello-world',
          '-i',
          'count-words',
          '-i',
          'sum-numbers',
          '-a',
          agent,
          '-o',
          jobs,
          '--job-name',
          job,
          '-y',
          '-q',
        ],
        { cwd, env: { PYTHONPATH: `/nonexistent${path.delimiter}${agentDir}` } },
      ).code,
    ).toBe(0);
    return Object.fromEntries(
      trialDirs(path.join(jobs, job)).map((t) => {
        const r = readJson(path.join(t, 'result.json')) as { verifier_result: { rewards: { reward: number } } };
        return [path.basename(t).split('__')[0], r.verifier_result.rewards.reward];
      }),
    );
  };
  expect(score('oracle', 'o')).toEqual({ 'hello-world': 1, 'count-words': 1, 'sum-numbers': 1 });
  expect(score('nop', 'n')).toEqual({ 'hello-world': 0, 'count-words': 0, 'sum-numbers': 0 });
  expect(score('agent:MiniAgent', 'm')).toEqual({ 'hello-world': 1, 'count-words': 0.25, 'sum-numbers': 0 });
  expect(execFileSync(STANDIN, ['--version'], { encoding: 'utf8' })).toBe(`${HARBOR_VERSION}\n`);
});

test('--dry-run validates without running (no job dir) and reports config errors with exit 1', () => {
  const jobs = tempDir();
  const ok = harbor(['run', '-p', DATASET, '-i', 'hello-world', '-k', '2', '-o', jobs, '--job-name', 'j', '-y', '--dry-run']);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toContain('Dry run OK — 2 trial(s); nothing was run.');
  expect(fs.existsSync(path.join(jobs, 'j'))).toBe(false);
  const bad = harbor(['run', '-p', DATASET, '-i', 'nosuch', '-o', jobs, '--job-name', 'j', '-y', '--dry-run']);
  expect(bad.code).toBe(1);
  expect(bad.stdout).toMatch(/^Dry run failed: No tasks matched the filter\(s\) \["nosuch"\]/m);
});

test('an unknown --ek key: Harbor 0.26 refuses the job in its own words (exit 1, no job dir), in the dry run too; 0.25 passes it', () => {
  const jobs = tempDir();
  const args = ['run', '-p', DATASET, '-i', 'hello-world', '--ek', 'bogus_key=1', '--ek', 'keep_containers=true', '-o', jobs, '-y'];
  const refusal = [
    "Invalid kwargs for environment 'docker':",
    "  Unknown option 'bogus_key'.",
    'See harbor environment schema docker for available options.',
  ].join('\n');
  for (const extra of [
    ['--job-name', 'j'],
    ['--job-name', 'j', '--dry-run'],
  ]) {
    const r = harbor([...args, ...extra], { env: { HARBOR_STANDIN_VERSION: '0.26.0' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(refusal);
    expect(fs.existsSync(path.join(jobs, 'j'))).toBe(false);
  }
  expect(harbor([...args, '--job-name', 'k', '--dry-run'], { env: { HARBOR_STANDIN_VERSION: '0.25.0' } }).code).toBe(0);
  const known = harbor(
    ['run', '-p', DATASET, '-i', 'hello-world', '--ek', 'keep_containers=true', '-o', jobs, '--job-name', 'm', '-y', '--dry-run'],
    {
      env: { HARBOR_STANDIN_VERSION: '0.26.0' },
    },
  );
  expect(known.code).toBe(0);
});

test('Harbor 0.25 tasks: docker_image without environment/, multi-step tasks; dirs that are not tasks are left out', () => {
  const ds = tempDir();
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(ds, rel)), { recursive: true });
    fs.writeFileSync(path.join(ds, rel), text);
  };
  write('image-only/task.toml', '[environment]\ndocker_image = "vero-base:bookworm"\n');
  write('image-only/instruction.md', 'x');
  write('image-only/tests/test.sh', 'echo 1 > /logs/verifier/reward.txt');
  write('steps/task.toml', '[[steps]]\nname = "one"\n[[steps]]\nname = "two"\n[environment]\ndocker_image = "vero-base:bookworm"\n');
  write('steps/steps/one/instruction.md', 'x');
  write('steps/steps/two/instruction.md', 'y');
  write('steps/tests/test.sh', 'echo 1 > /logs/verifier/reward.txt');
  write('notes/README.md', 'not a task');
  const jobs = tempDir();
  expect(harbor(['run', '-p', ds, '-o', jobs, '--job-name', 'j', '-y', '-q']).code).toBe(0);
  expect(
    trialDirs(path.join(jobs, 'j'))
      .map((t) => path.basename(t).split('__')[0])
      .sort(),
  ).toEqual(['image-only', 'steps']);
});

test('a job whose task files changed since it started is not resumed (lock.json mismatch, exit 1)', () => {
  const ds = tempDir();
  fs.cpSync(path.join(DATASET, 'hello-world'), path.join(ds, 'hello-world'), { recursive: true });
  const jobs = tempDir();
  const args = ['run', '-p', ds, '-o', jobs, '--job-name', 'j', '-y', '-q'];
  expect(harbor(args).code).toBe(0);
  expect(harbor(args).code).toBe(0); // unchanged: resumes (nothing left to run)
  fs.appendFileSync(path.join(ds, 'hello-world', 'tests', 'test.sh'), '\n# changed\n');
  const changed = harbor(args);
  expect(changed.code).toBe(1);
  expect(changed.stderr).toContain(
    `FileExistsError: Job directory ${path.join(jobs, 'j')} already has a lock.json that does not match the resolved job lock.`,
  );
});

test('registry task paths resolve against the working directory, as in Harbor 0.25', () => {
  const cwd = tempDir();
  const regDir = tempDir();
  fs.cpSync(path.join(DATASET, 'hello-world'), path.join(cwd, 'tasks', 'hello-world'), { recursive: true });
  fs.writeFileSync(
    path.join(regDir, 'registry.json'),
    JSON.stringify([{ name: 'ds', version: '1.0', tasks: [{ name: 'hello-world', path: 'tasks/hello-world' }] }]),
  );
  const jobs = tempDir();
  const r = harbor(
    ['run', '-d', 'ds@1.0', '--registry-path', path.join(regDir, 'registry.json'), '-o', jobs, '--job-name', 'j', '-y', '-q'],
    { cwd },
  );
  expect(r.code).toBe(0);
  expect(trialDirs(path.join(jobs, 'j'))).toHaveLength(1);
});

test("Harbor 0.26's result format and policy with HARBOR_STANDIN_VERSION=0.26.0; 0.25's by default", () => {
  const scenario = {
    tasks: {
      'hello-world': { exception: 'ApiRateLimitError', reward: 1 },
      'count-words': { exception: 'NonZeroAgentExitCodeError', reward: 0.5 },
    },
  };
  const run = (env: Record<string, string>) => {
    const jobs = tempDir();
    const args = ['run', '-p', DATASET, '-i', 'hello-world', '-i', 'count-words', '-r', '2', '-o', jobs, '--job-name', 'j', '-y', '-q'];
    expect(harbor(args, { env: { HARBOR_STANDIN_SCENARIO: JSON.stringify(scenario), ...env } }).code).toBe(0);
    const job = path.join(jobs, 'j');
    const byTask = Object.fromEntries(trialDirs(job).map((t) => [path.basename(t).split('__')[0]!, readJson(path.join(t, 'result.json'))]));
    return { job, byTask, stats: readJson(path.join(job, 'result.json')).stats as Record<string, unknown> };
  };
  const v26 = run({ HARBOR_STANDIN_VERSION: '0.26.0' });
  expect(v26.byTask['hello-world']).toMatchObject({
    schema_version: 1,
    reward_valid: false,
    exception_info: { exception_type: 'ApiRateLimitError', policy: { should_retry: true, should_grade: true, has_valid_reward: false } },
  });
  expect(v26.byTask['count-words']).toMatchObject({ reward_valid: true, exception_info: { policy: { has_valid_reward: true } } });
  // 0.26 retries the rate limit (twice) but not the agent's non-zero exit; 0.25 retried both.
  expect(v26.stats.n_retries).toBe(2);
  expect(readJson(path.join(v26.job, 'lock.json')).harbor).toMatchObject({ version: '0.26.0' });
  const evals26 = Object.values(v26.stats.evals as Record<string, { metrics: { mean: number }[] }>)[0]!;
  expect(evals26.metrics[0]!.mean).toBe(0.5); // only the valid reward counts in 0.26's mean

  const v25 = run({});
  expect(v25.byTask['hello-world']!.schema_version).toBeUndefined();
  expect(v25.byTask['hello-world']!.reward_valid).toBeUndefined();
  expect(v25.byTask['hello-world']!.exception_info).not.toHaveProperty('policy');
  expect(v25.stats.n_retries).toBe(4);
  expect(readJson(path.join(v25.job, 'lock.json')).harbor).toMatchObject({ version: '0.25.0' });
  expect(harbor(['--version'], { env: { HARBOR_STANDIN_VERSION: '0.25.0' } }).stdout).toBe('0.25.0\n');
  expect(harbor(['--version'], { env: { HARBOR_STANDIN_VERSION: '9.9.9' } }).code).toBe(2);
});
