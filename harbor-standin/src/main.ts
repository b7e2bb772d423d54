/**
 * A faithful stand-in for `harbor` 0.22 (see ../README.md). Simulates trials instead of running containers;
 * everything Harbor writes to disk, its flags, exit codes, retry and resume rules are reproduced.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { AgentSpec, DEFAULT_RETRY_EXCLUDE, ENVIRONMENT_TYPES, JobSpec } from './config';
import { Job } from './job';
import { parseOptions, ParsedOptions, RESUME_OPTIONS, RUN_OPTIONS, UsageError } from './options';
import { defaultJobName, dumps } from './pyjson';
import { readJson } from '../../infra/json-file';
import { agentImportProblem, AttemptCounter, loadScenario, teardownMsFor } from './scenario';
import { STANDIN_VERSION } from './version';
import { checkEnvironmentOptions, OptionsRefusal } from './environment-options';
import { ConfigError, LocalTask, tasksFromPath, tasksFromRegistry } from './tasks';

const BUILTIN_AGENTS = new Set(
  'oracle nop claude-code cline-cli cortex-code terminus terminus-1 terminus-2 aider codex cursor-cli gemini-cli antigravity-cli rovodev-cli goose grok-build hermes junie mini-swe-agent nemo-agent swe-agent opencode openclaw openhands openhands-sdk antigravity-sdk kimi-code kimi-cli langgraph deerflow mimo mcode pi qwen-coder copilot-cli devin trae-agent computer-1 eve fx dspy-rlm vibe'.split(
    ' ',
  ),
);

const invocationId = `${process.pid}-${Date.now()}`;
let logFile: string | undefined;
let jobDirForLog: string | null = null;

function logInvocation(event: 'start' | 'end', extra: Record<string, unknown>): void {
  if (!logFile) return;
  const line = {
    event,
    invocation: invocationId,
    pid: process.pid,
    argv: process.argv.slice(2),
    cwd: process.cwd(),
    // Names only (never values): which variables the harbor process was given.
    env_names: Object.keys(process.env).sort(),
    // Which key a model client would use, as a digest (never the value): tests tell a gateway token from a key.
    api_key_digests: Object.fromEntries(
      Object.entries(process.env)
        .filter(([k, v]) => k.endsWith('_API_KEY') && v)
        .map(([k, v]) => [k, createHash('sha256').update(v!).digest('hex').slice(0, 16)]),
    ),
    job_dir: jobDirForLog,
    time: new Date().toISOString(),
    ...extra,
  };
  fs.appendFileSync(logFile, `${JSON.stringify(line)}\n`);
}

function usageFail(err: UsageError): never {
  process.stderr.write(`Usage: harbor ${err.command} [OPTIONS]\nTry 'harbor ${err.command} -h' for help.\n\nError: ${err.message}\n`);
  process.exit(2);
}

function configFail(err: Error, pythonType: string): never {
  process.stderr.write(
    `Traceback (most recent call last):\n  File "harbor/cli/jobs.py", line 1, in start\n${pythonType}: ${err.message}\n`,
  );
  process.exit(1);
}

/** Harbor's `parse_kwargs`: JSON first, then Python literals, else a string; a missing `=` is a ValueError. */
export function parseKwargs(items: string[] | undefined, literal = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const item of items ?? []) {
    const eq = item.indexOf('=');
    if (eq < 0) throw new ConfigError(`Invalid key=value format: ${item}`);
    const key = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1);
    if (literal) {
      out[key] = raw;
      continue;
    }
    try {
      out[key] = JSON.parse(raw);
    } catch {
      out[key] = raw === 'True' ? true : raw === 'False' ? false : raw === 'None' ? null : raw;
    }
  }
  return out;
}

function agentsFrom(o: ParsedOptions): AgentSpec[] {
  let name: string | null = null;
  let importPath: string | null = null;
  const a = o.agent as string | undefined;
  if (a !== undefined) {
    if (a.includes(':') && !a.startsWith('acp:')) importPath = a;
    else {
      if (!BUILTIN_AGENTS.has(a)) throw new ConfigError(`Unknown agent name: ${a}. Valid names: ${[...BUILTIN_AGENTS].join(', ')}`);
      name = a;
    }
  } else if (o.agent_import_path) {
    process.stderr.write('Warning: --agent-import-path is deprecated; use --agent module.path:Class\n');
    importPath = o.agent_import_path as string;
  } else name = 'oracle';
  const kwargs = parseKwargs(o.agent_kwarg as string[]);
  const env = parseKwargs(o.agent_env as string[], true) as Record<string, string>;
  const models = (o.model as string[] | undefined) ?? [];
  // Without -a, -m is ignored (no agents come from a config file here).
  if ((a === undefined && !importPath) || models.length === 0) return [{ name, import_path: importPath, model_name: null, kwargs, env }];
  return models.map((m) => ({ name, import_path: importPath, model_name: m, kwargs, env }));
}

function envTemplates(task: LocalTask, oracle: boolean): { name: string; hasDefault: boolean }[] {
  const toml = parseToml(fs.readFileSync(path.join(task.absPath, 'task.toml'), 'utf8')) as Record<string, { env?: Record<string, string> }>;
  const tables = [toml.environment?.env, toml.verifier?.env, ...(oracle ? [toml.solution?.env] : [])];
  return tables.flatMap((t) =>
    Object.values(t ?? {}).flatMap((v) =>
      [...String(v).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}/g)].map((m) => ({ name: m[1]!, hasDefault: m[2] !== undefined })),
    ),
  );
}

async function confirmHostEnv(tasks: LocalTask[], oracle: boolean, yes: boolean): Promise<void> {
  const vars = tasks.flatMap((t) => envTemplates(t, oracle));
  if (vars.length === 0) return;
  const missing = [...new Set(vars.filter((v) => !v.hasDefault && process.env[v.name] === undefined).map((v) => v.name))];
  process.stdout.write(`Tasks read these host environment variables: ${[...new Set(vars.map((v) => v.name))].join(', ')}\n`);
  if (missing.length) {
    process.stderr.write(`Missing required environment variables: ${missing.join(', ')}\n`);
    process.exit(1);
  }
  if (yes) return;
  process.stdout.write('Proceed? (Y/n) ');
  const answer = await new Promise<string | null>((resolve) => {
    let buf = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (d: string) => {
      buf += d;
      if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
    });
    process.stdin.on('end', () => resolve(buf.length ? buf : null));
  });
  if (answer === null || /^n/i.test(answer.trim())) {
    process.stderr.write('Aborted!\n');
    process.exit(1);
  }
}

/**
 * The one part of a `-c/--config` job file the stand-in reads: the retry backoff (Harbor has no flags for it).
 * Anything else is refused: pass flags instead.
 */
function retryBackoffFrom(o: ParsedOptions, cwd: string): JobSpec['retryBackoff'] {
  const backoff = { waitMultiplier: 1, minWaitSec: 1, maxWaitSec: 60 };
  if (!o.config) return backoff;
  const file = path.resolve(cwd, o.config as string);
  let doc: unknown;
  try {
    doc = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read the job config ${o.config}: ${(e as Error).message}`);
  }
  const retry = (doc as { retry?: Record<string, unknown> } | null)?.retry;
  const allowed = ['wait_multiplier', 'min_wait_sec', 'max_wait_sec'];
  const badRetry = Object.entries(retry ?? {}).some(([k, v]) => !allowed.includes(k) || typeof v !== 'number');
  if (Object.keys(doc ?? {}).some((k) => k !== 'retry') || badRetry)
    throw new ConfigError(
      'the stand-in reads only retry.{wait_multiplier, min_wait_sec, max_wait_sec} (numbers) from -c/--config; pass flags instead',
    );
  return {
    waitMultiplier: (retry?.wait_multiplier as number | undefined) ?? backoff.waitMultiplier,
    minWaitSec: (retry?.min_wait_sec as number | undefined) ?? backoff.minWaitSec,
    maxWaitSec: (retry?.max_wait_sec as number | undefined) ?? backoff.maxWaitSec,
  };
}

function specFrom(o: ParsedOptions, cwd: string): { spec: JobSpec; tasks: LocalTask[] } {
  const retryBackoff = retryBackoffFrom(o, cwd);
  if (o.env_file && !fs.existsSync(path.resolve(cwd, o.env_file as string)))
    throw new ConfigError(`Env file not found: ${o.env_file}`, 'FileNotFoundError');
  const envOpt = o.env as string | undefined;
  let envType = 'docker';
  let envImport: string | null = (o.environment_import_path as string | undefined) ?? null;
  if (envOpt !== undefined) {
    if (envOpt.includes(':')) envImport = envOpt;
    else if (!ENVIRONMENT_TYPES.includes(envOpt)) {
      throw new UsageError(`Invalid value for '-e' / '--env': '${envOpt}' is not a valid environment type.`, 'run');
    } else envType = envOpt;
  }
  const sel = {
    include: o.include_task_name as string[] | undefined,
    exclude: o.exclude_task_name as string[] | undefined,
    nTasks: o.n_tasks as number | undefined,
  };
  const disableVerification = o.disable_verification === true;
  let tasks: LocalTask[];
  const datasets: Record<string, unknown>[] = [];
  const taskConfigs: Record<string, unknown>[] = [];
  // The filters given (JSON leaves out those that are undefined).
  const filters = { task_names: sel.include, exclude_task_names: sel.exclude, n_tasks: sel.nTasks };
  if (o.path !== undefined) {
    if (o.dataset !== undefined || o.task !== undefined) throw new ConfigError('Cannot specify both --path and --dataset/--task.');
    const found = tasksFromPath(o.path as string, cwd, sel, disableVerification);
    tasks = found.tasks;
    if (found.isDataset) datasets.push({ path: o.path, ...filters });
    else taskConfigs.push({ path: o.path });
  } else if (o.dataset !== undefined) {
    const found = tasksFromRegistry(o.dataset as string, o.registry_path as string | undefined, cwd, sel);
    tasks = found.tasks;
    datasets.push({ name: found.name, version: found.version, registry_path: o.registry_path, ...filters });
  } else if (o.task !== undefined) {
    throw new ConfigError(`Task ${o.task} is a Harbor Hub package; the stand-in has no network access.`);
  } else {
    if (sel.include || sel.exclude || sel.nTasks !== undefined)
      throw new ConfigError('Cannot specify task filters without --path, --dataset or --task.');
    throw new ConfigError('Either --path, --dataset or --task must be provided.');
  }
  const spec: JobSpec = {
    jobName: (o.job_name as string | undefined) ?? defaultJobName(new Date()),
    jobsDir: (o.jobs_dir as string | undefined) ?? 'jobs',
    nAttempts: (o.n_attempts as number | undefined) ?? 1,
    nConcurrent: (o.n_concurrent as number | undefined) ?? 4,
    quiet: o.quiet === true,
    debug: o.debug === true,
    timeoutMultiplier: (o.timeout_multiplier as number | undefined) ?? 1,
    agentTimeoutMultiplier: (o.agent_timeout_multiplier as number | undefined) ?? null,
    verifierTimeoutMultiplier: (o.verifier_timeout_multiplier as number | undefined) ?? null,
    agentSetupTimeoutMultiplier: (o.agent_setup_timeout_multiplier as number | undefined) ?? null,
    environmentBuildTimeoutMultiplier: (o.environment_build_timeout_multiplier as number | undefined) ?? null,
    maxRetries: (o.max_retries as number | undefined) ?? 0,
    retryInclude: (o.retry_include as string[] | undefined) ?? null,
    retryExclude: (o.retry_exclude as string[] | undefined) ?? [...DEFAULT_RETRY_EXCLUDE],
    retryBackoff,
    environment: {
      type: envType,
      import_path: envImport,
      kwargs: parseKwargs(o.environment_kwarg as string[]),
      delete: o.delete !== false,
      force_build: o.force_build === true,
    },
    disableVerification,
    agents: agentsFrom(o),
    datasets,
    tasks: taskConfigs,
    artifacts: (o.artifact as string[] | undefined) ?? [],
  };
  checkAgentImports(spec.agents);
  checkEnvironmentOptions(spec.environment);
  return { spec, tasks };
}

/** An agent (`-a module.path:Class`) Harbor could not import: it refuses the job before it starts, as Harbor 0.25. */
class AgentImportError extends ConfigError {
  constructor(
    message: string,
    readonly index: number,
  ) {
    super(message, 'ImportError');
  }
}

function checkAgentImports(agents: AgentSpec[]): void {
  const pythonPath = (process.env.PYTHONPATH ?? '').split(path.delimiter).filter(Boolean);
  agents.forEach((a, i) => {
    const problem = a.import_path ? agentImportProblem(a.import_path, pythonPath) : null;
    if (problem) throw new AgentImportError(problem, i);
  });
}

/** `--dry-run`: validates the job locally and runs nothing; creates no job dir (Harbor 0.25). */
function dryRun(o: ParsedOptions, cwd: string): number {
  if (o.print_config) throw new UsageError('--dry-run and --print-config cannot be combined.', 'run');
  try {
    const { spec, tasks } = specFrom(o, cwd);
    const n = tasks.length * spec.nAttempts * spec.agents.length;
    process.stdout.write(`Dry run OK — ${n} trial(s); nothing was run.\n`);
    return 0;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stdout.write(`Dry run failed: ${e instanceof AgentImportError ? `agents[${e.index}]: ` : ''}${e.message}\n`);
    return 1;
  }
}

async function runCommand(argv: string[], command: string): Promise<number> {
  const o = parseOptions(argv, RUN_OPTIONS, command);
  if (o.help) {
    process.stdout.write(
      `Usage: harbor ${command} [OPTIONS]\n\n  Start a job (harbor ${STANDIN_VERSION} stand-in).\n\nOptions:\n${RUN_OPTIONS.map((s) => `  ${s.names.join(', ')}`).join('\n')}\n`,
    );
    return 0;
  }
  const cwd = process.cwd();
  if (o.dry_run) return dryRun(o, cwd);
  const { spec, tasks } = specFrom(o, cwd);
  const { scenario, file } = loadScenario(process.env.HARBOR_STANDIN_SCENARIO);
  const stateDir = process.env.HARBOR_STANDIN_STATE_DIR ?? (file ? `${file}.state` : null);
  const timeScale = Number(process.env.HARBOR_STANDIN_TIME_SCALE ?? scenario?.time_scale ?? 1);
  teardownMsFor({}, scenario, process.env.HARBOR_STANDIN_TEARDOWN_MS); // a bad value fails here, before any trial
  const job = new Job(spec, tasks, {
    cwd,
    scenario,
    counter: new AttemptCounter(stateDir),
    timeScale,
    log: (line) => {
      const stamped = `${new Date().toISOString()} INFO ${line}\n`;
      if (fs.existsSync(job.dir)) fs.appendFileSync(path.join(job.dir, 'job.log'), stamped);
      if (!spec.quiet) process.stderr.write(stamped);
    },
  });
  if (o.print_config) {
    process.stdout.write(`${dumps(job.configJson())}\n`);
    return 0;
  }
  jobDirForLog = job.dir;
  await confirmHostEnv(
    tasks,
    spec.agents.some((a) => a.name === 'oracle'),
    o.yes === true,
  );
  return job.run();
}

async function resumeCommand(argv: string[]): Promise<number> {
  const o = parseOptions(argv, RESUME_OPTIONS, 'job resume');
  if (!o.job_path) throw new UsageError("Missing option '-p' / '--job-path'.", 'job resume');
  const jobDir = path.resolve(o.job_path as string);
  const configFile = path.join(jobDir, 'config.json');
  if (!fs.existsSync(configFile)) throw new ConfigError(`Job directory ${o.job_path} has no config.json.`, 'FileNotFoundError');
  const filters = new Set((o.filter_error_type as string[] | undefined) ?? ['CancelledError']);
  for (const e of fs.readdirSync(jobDir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    // Unreadable results are skipped here, as Harbor does.
    const result = readJson<{ exception_info?: { exception_type?: string } | null }>(path.join(jobDir, e.name, 'result.json'));
    const t = result?.exception_info?.exception_type;
    if (t && filters.has(t)) fs.rmSync(path.join(jobDir, e.name), { recursive: true, force: true });
  }
  // Rebuild the flags the job was started with from its config.json.
  const cfg = JSON.parse(fs.readFileSync(configFile, 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const args: string[] = ['--job-name', path.basename(jobDir), '-o', path.dirname(jobDir), '-y'];
  const ds = cfg.datasets?.[0] ?? cfg.tasks?.[0];
  if (ds?.path) args.push('-p', ds.path);
  else if (ds?.name) args.push('-d', `${ds.name}@${ds.version}`, '--registry-path', ds.registry_path);
  for (const t of ds?.task_names ?? []) args.push('-i', t);
  for (const t of ds?.exclude_task_names ?? []) args.push('-x', t);
  if (ds?.n_tasks != null) args.push('-l', String(ds.n_tasks));
  if (cfg.n_attempts) args.push('-k', String(cfg.n_attempts));
  if (cfg.n_concurrent_trials) args.push('-n', String(cfg.n_concurrent_trials));
  if (cfg.quiet) args.push('-q');
  if (cfg.retry?.max_retries) args.push('-r', String(cfg.retry.max_retries));
  for (const t of cfg.retry?.include_exceptions ?? []) args.push('--retry-include', t);
  if (cfg.retry?.exclude_exceptions) for (const t of cfg.retry.exclude_exceptions) args.push('--retry-exclude', t);
  if (cfg.timeout_multiplier !== undefined) args.push('--timeout-multiplier', String(cfg.timeout_multiplier));
  for (const [flag, key] of [
    ['--agent-timeout-multiplier', 'agent_timeout_multiplier'],
    ['--verifier-timeout-multiplier', 'verifier_timeout_multiplier'],
    ['--agent-setup-timeout-multiplier', 'agent_setup_timeout_multiplier'],
    ['--environment-build-timeout-multiplier', 'environment_build_timeout_multiplier'],
  ] as const)
    if (cfg[key] != null) args.push(flag, String(cfg[key]));
  const env = cfg.environment ?? {};
  if (env.import_path) args.push('-e', env.import_path);
  else if (env.type) args.push('-e', env.type);
  for (const [k, v] of Object.entries(env.kwargs ?? {})) args.push('--ek', `${k}=${JSON.stringify(v)}`);
  if (env.delete === false) args.push('--no-delete');
  if (cfg.verifier?.disable) args.push('--disable-verification');
  for (const a of cfg.agents ?? [{ name: 'oracle' }]) {
    args.push('-a', a.import_path ?? a.name ?? 'oracle');
    if (a.model_name) args.push('-m', a.model_name);
    for (const [k, v] of Object.entries(a.kwargs ?? {})) args.push('--ak', `${k}=${JSON.stringify(v)}`);
    for (const [k, v] of Object.entries(a.env ?? {})) args.push('--ae', `${k}=${String(v)}`);
  }
  for (const a of cfg.artifacts ?? []) args.push('--artifact', a);
  return runCommand(args, 'job start');
}

async function main(argv: string[]): Promise<number> {
  logFile = process.env.HARBOR_STANDIN_LOG;
  if (argv[0] === '--version' || argv[0] === '-v' || argv[0] === 'version') {
    process.stdout.write(`${STANDIN_VERSION}\n`);
    return 0;
  }
  logInvocation('start', {});
  process.on('exit', (code) => logInvocation('end', { exit_code: code }));
  try {
    const [a, b] = argv;
    if (a === 'run') return await runCommand(argv.slice(1), 'run');
    if ((a === 'job' || a === 'jobs') && b === 'start') return await runCommand(argv.slice(2), 'job start');
    if ((a === 'job' || a === 'jobs') && b === 'resume') return await resumeCommand(argv.slice(2));
    if (a === undefined || a === '-h' || a === '--help') {
      process.stdout.write(
        'Usage: harbor [OPTIONS] COMMAND [ARGS]...\n\nCommands:\n  run   Start a job (alias of job start)\n  job   start | resume\n',
      );
      return 0;
    }
    throw new UsageError(`No such command '${a}'.`, '');
  } catch (e) {
    if (e instanceof UsageError) usageFail(e);
    if (e instanceof OptionsRefusal) {
      process.stdout.write(`${e.message}\n`);
      return 1;
    }
    if (e instanceof ConfigError) configFail(e, e.pythonType);
    throw e;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`Traceback (most recent call last):\n${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
