import { collidingFlags, HarborSection } from '../../model/harbor/config';
import { compiledJobArgs, harborArgv, launcher, outerAgentArgv, retryBackoffConfig } from '../../model/harbor/argv';
import { jobNameFor } from '../../model/harbor/job-name';

const base = { source: { path: '/data/ds' }, task: 'hello', jobsDir: '/runs/x/jobs', jobName: 'hello', worktree: '/wt/abc' };
const flagValue = (argv: string[], flag: string) => argv[argv.indexOf(flag) + 1];

test('every typed knob is emitted as its real flag', () => {
  const harbor = HarborSection.parse({
    command: 'uv run --project {worktree} harbor',
    agent: 'pkg.mod:Agent',
    model: 'anthropic/x',
    environment: 'modal',
    n_attempts: 3,
    max_retries: 5,
    agent_kwargs: { temperature: 0.2, mode: 'fast' },
    agent_env: { API_BASE: 'http://x' },
    environment_kwargs: { keep_containers: true },
    retry_include: ['RuntimeError'],
    retry_exclude: ['AgentTimeoutError'],
    timeout_multiplier: 2,
    agent_timeout_multiplier: 3,
    extra_args: ['--debug'],
  });
  const argv = harborArgv({ ...base, harbor });
  expect(argv.slice(0, 6)).toEqual(['uv', 'run', '--project', '/wt/abc', 'harbor', 'run']);
  expect(flagValue(argv, '-p')).toBe('/data/ds');
  expect(flagValue(argv, '-i')).toBe('hello');
  expect(flagValue(argv, '-a')).toBe('pkg.mod:Agent');
  expect(flagValue(argv, '-m')).toBe('anthropic/x');
  expect(flagValue(argv, '-e')).toBe('modal');
  expect(flagValue(argv, '-k')).toBe('3');
  expect(flagValue(argv, '-r')).toBe('5');
  expect(flagValue(argv, '-n')).toBe('3'); // all attempts of the task in flight
  expect(argv.filter((a, i) => argv[i - 1] === '--ak')).toEqual(['mode=fast', 'temperature=0.2']);
  expect(flagValue(argv, '--ae')).toBe('API_BASE=http://x');
  expect(flagValue(argv, '--ek')).toBe('keep_containers=true');
  expect(flagValue(argv, '--retry-include')).toBe('RuntimeError');
  // The configured exclusions, plus Harbor 0.26's policy exclusions a non-empty list would drop.
  const excluded = argv.filter((a, i) => argv[i - 1] === '--retry-exclude');
  expect(excluded).toEqual(
    expect.arrayContaining(['AgentTimeoutError', 'NonZeroAgentExitCodeError', 'BudgetExceededError', 'CancelledError']),
  );
  expect(excluded).not.toContain('ApiRateLimitError');
  expect(excluded).toEqual([...excluded].sort());
  expect(flagValue(argv, '--timeout-multiplier')).toBe('2');
  expect(flagValue(argv, '--agent-timeout-multiplier')).toBe('3');
  expect(flagValue(argv, '-o')).toBe('/runs/x/jobs');
  expect(flagValue(argv, '--job-name')).toBe('hello');
  expect(argv).toContain('-y');
  expect(argv.at(-1)).toBe('--debug');
});

test('registry sources use -d and --registry-path; defaults give -k 1 -r 0 -n 1', () => {
  const argv = harborArgv({ ...base, source: { dataset: 'bench@1.0', registry_path: '/r.json' }, harbor: HarborSection.parse({}) });
  expect(argv[0]).toBe('harbor');
  expect(flagValue(argv, '-d')).toBe('bench@1.0');
  expect(flagValue(argv, '--registry-path')).toBe('/r.json');
  expect(argv).not.toContain('-p');
  expect([flagValue(argv, '-k'), flagValue(argv, '-r'), flagValue(argv, '-n'), flagValue(argv, '-a')]).toEqual(['1', '0', '1', 'oracle']);
});

test('the same inputs give the same argv (Harbor resumes only an identical config)', () => {
  const h = HarborSection.parse({ agent_kwargs: { b: 1, a: 2 } });
  expect(harborArgv({ ...base, harbor: h })).toEqual(
    harborArgv({ ...base, harbor: HarborSection.parse({ agent_kwargs: { a: 2, b: 1 } }) }),
  );
});

test('extra_args that collide with controlled flags are rejected by name, long and short forms', () => {
  expect(collidingFlags(['--n-attempts', '3', '-r', '2', '--jobs-dir=/x', '--debug', '-k'])).toEqual([
    '--n-attempts',
    '-r',
    '--jobs-dir',
    '-k',
  ]);
  expect(collidingFlags(['--debug', '--force-build', '--n-concurrent-agents', '2'])).toEqual([]);
  const r = HarborSection.safeParse({ extra_args: ['--max-retries', '9', '-a', 'x'] });
  expect(r.success).toBe(false);
  expect(r.error!.issues[0]!.message).toBe('--max-retries, -a are set by vero-harbor from typed fields; use the field instead');
});

test('launcher substitution and job names', () => {
  expect(launcher(HarborSection.parse({ command: ['uv', 'run', '--project={worktree}', 'harbor'] }), '/w')).toEqual([
    'uv',
    'run',
    '--project=/w',
    'harbor',
  ]);
  expect(jobNameFor('hello-world')).toBe('hello-world');
  expect(jobNameFor('org/name')).toMatch(/^org__name-[0-9a-f]{8}$/);
  expect(jobNameFor('org/name')).not.toBe(jobNameFor('org__name'));
});

test("retry_include never drops Harbor's default exclusions; override_error_policy goes to the job config file", () => {
  const onlyInclude = harborArgv({ ...base, harbor: HarborSection.parse({ retry_include: ['ApiRateLimitError'] }) });
  expect(onlyInclude).not.toContain('--retry-exclude'); // Harbor's default exclusions stay in force
  const h = HarborSection.parse({ override_error_policy: { ApiRateLimitError: { has_valid_reward: true } } });
  expect(retryBackoffConfig(h)).toEqual({ override_error_policy: { ApiRateLimitError: { has_valid_reward: true } } });
  expect(retryBackoffConfig(HarborSection.parse({}))).toBeNull();
  expect(() => HarborSection.parse({ override_error_policy: { X: { has_valid_reward: 'yes' } } })).toThrow();
  expect(() => HarborSection.parse({ override_error_policy: { X: { bogus: true } } })).toThrow();
});

test("a compiled task's run: kwargs sent as kwargItem sends them, the job's flags those of a task's run", () => {
  const agent = { kind: 'import' as const, importPath: 'opt:Agent', kwargs: { look_only: 'true', name: 'x', code: '007' } };
  expect(outerAgentArgv(agent)).toEqual([
    '--agent-import-path',
    'opt:Agent',
    '--ak',
    'code="007"',
    '--ak',
    'look_only="true"',
    '--ak',
    'name=x',
  ]);
  expect(outerAgentArgv({ kind: 'oracle' })).toEqual(['-a', 'oracle']);
  const args = compiledJobArgs({ jobsDir: '/jobs', jobName: 'j', agent: { kind: 'oracle' } });
  expect(args).toEqual(['-e', 'docker', '-o', '/jobs', '--job-name', 'j', '-y', '-q', '-a', 'oracle']);
  // The same job flags as a task's run.
  const task = harborArgv({ ...base, jobsDir: '/jobs', jobName: 'j', harbor: HarborSection.parse({ agent: 'oracle' }) });
  expect(task.slice(task.indexOf('-o'), task.indexOf('-q') + 1)).toEqual(args.slice(2, 8));
});
