/**
 * `harbor run` / `harbor job start` option table (harbor 0.22.0, reference/harbor.md §1.2) and a
 * Click-compatible parser: unknown options and bad values are usage errors (exit 2), like Click.
 */

export type OptionKind = 'int' | 'float' | 'str' | 'flag' | 'choice';

export interface OptionSpec {
  /** Destination key. */
  key: string;
  names: string[];
  kind: OptionKind;
  multiple?: boolean;
  min?: number;
  choices?: string[];
  /** For on/off flag pairs: the name that sets false. */
  negative?: string;
  /** Accepted for compatibility but meaningless offline; the stand-in ignores it. */
  ignored?: boolean;
}

const s = (key: string, names: string[], extra: Partial<OptionSpec> = {}): OptionSpec => ({ key, names, kind: 'str', ...extra });
const multi = (key: string, names: string[], extra: Partial<OptionSpec> = {}): OptionSpec => s(key, names, { multiple: true, ...extra });
const int = (key: string, names: string[], extra: Partial<OptionSpec> = {}): OptionSpec => ({ key, names, kind: 'int', ...extra });
const float = (key: string, names: string[]): OptionSpec => ({ key, names, kind: 'float' });
const flag = (key: string, names: string[], extra: Partial<OptionSpec> = {}): OptionSpec => ({ key, names, kind: 'flag', ...extra });
const resourceModes = ['auto', 'limit', 'request', 'guarantee', 'ignore'];

export const RUN_OPTIONS: OptionSpec[] = [
  s('config', ['-c', '--config']),
  flag('print_config', ['--print-config']),
  s('job_name', ['--job-name']),
  s('jobs_dir', ['-o', '--jobs-dir']),
  int('n_attempts', ['-k', '--n-attempts'], { min: 1 }),
  float('timeout_multiplier', ['--timeout-multiplier']),
  float('agent_timeout_multiplier', ['--agent-timeout-multiplier']),
  float('verifier_timeout_multiplier', ['--verifier-timeout-multiplier']),
  float('agent_setup_timeout_multiplier', ['--agent-setup-timeout-multiplier']),
  float('environment_build_timeout_multiplier', ['--environment-build-timeout-multiplier']),
  flag('quiet', ['-q', '--quiet', '--silent']),
  flag('debug', ['--debug']),
  int('n_concurrent', ['-n', '--n-concurrent'], { min: 1 }),
  int('n_concurrent_agents', ['--n-concurrent-agents'], { min: 1 }),
  int('max_retries', ['-r', '--max-retries'], { min: 0 }),
  multi('retry_include', ['--retry-include']),
  multi('retry_exclude', ['--retry-exclude']),
  flag('yes', ['-y', '--yes']),
  s('env_file', ['--env-file']),
  flag('install_only', ['--install-only']),
  flag('dry_run', ['--dry-run']),
  multi('artifact', ['--artifact']),
  // agent
  s('agent', ['-a', '--agent']),
  s('agent_import_path', ['--agent-import-path']),
  multi('model', ['-m', '--model']),
  multi('agent_kwarg', ['--ak', '--agent-kwarg']),
  multi('agent_env', ['--ae', '--agent-env']),
  multi('allow_agent_host', ['--allow-agent-host']),
  flag('resume_trajectory', ['--resume-trajectory'], { ignored: true }),
  s('load_trajectory', ['--load-trajectory'], { ignored: true }),
  multi('agent_include_logs', ['--agent-include-logs'], { ignored: true }),
  multi('agent_exclude_logs', ['--agent-exclude-logs'], { ignored: true }),
  multi('mcp_config', ['--mcp-config'], { ignored: true }),
  multi('skill', ['--skill', '--skills'], { ignored: true }),
  // environment
  s('env', ['-e', '--env']),
  s('environment_import_path', ['--environment-import-path']),
  multi('allow_environment_host', ['--allow-environment-host']),
  flag('force_build', ['--force-build'], { negative: '--no-force-build' }),
  flag('delete', ['--delete'], { negative: '--no-delete' }),
  { key: 'cpus', names: ['--cpus'], kind: 'choice', choices: resourceModes },
  { key: 'memory', names: ['--memory'], kind: 'choice', choices: resourceModes },
  int('override_cpus', ['--override-cpus']),
  int('override_memory_mb', ['--override-memory-mb']),
  int('override_storage_mb', ['--override-storage-mb']),
  int('override_gpus', ['--override-gpus']),
  s('override_tpu', ['--override-tpu'], { ignored: true }),
  s('mounts', ['--mounts', '--mounts-json'], { ignored: true }),
  multi('extra_docker_compose', ['--extra-docker-compose'], { ignored: true }),
  multi('environment_kwarg', ['--ek', '--environment-kwarg']),
  // verifier
  multi('verifier_env', ['--ve', '--verifier-env']),
  multi('verifier_include_logs', ['--verifier-include-logs'], { ignored: true }),
  multi('verifier_exclude_logs', ['--verifier-exclude-logs'], { ignored: true }),
  s('verifier', ['--verifier'], { ignored: true }),
  multi('verifier_kwarg', ['--verifier-kwarg'], { ignored: true }),
  flag('disable_verification', ['--disable-verification'], { negative: '--enable-verification' }),
  // dataset / task selection
  s('path', ['-p', '--path']),
  s('dataset', ['-d', '--dataset']),
  s('registry_url', ['--registry-url']),
  s('registry_path', ['--registry-path']),
  s('repo', ['--repo']),
  s('task', ['-t', '--task']),
  multi('include_task_name', ['-i', '--include-task-name']),
  multi('exclude_task_name', ['-x', '--exclude-task-name']),
  int('n_tasks', ['-l', '--n-tasks'], { min: 0 }),
  s('task_git_url', ['--task-git-url']),
  s('task_git_commit', ['--task-git-commit']),
  multi('extra_instruction_path', ['--extra-instruction-path']),
  multi('extra_instruction', ['--extra-instruction']),
];

export const RESUME_OPTIONS: OptionSpec[] = [
  s('job_path', ['-p', '--job-path']),
  multi('filter_error_type', ['-f', '--filter-error-type']),
  flag('yes', ['-y', '--yes']),
  flag('debug', ['--debug']),
];

export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: string,
  ) {
    super(message);
  }
}

export type ParsedOptions = Record<string, string | number | boolean | string[] | undefined>;

/** Parses argv against the table; throws UsageError with Click's wording on bad input. */
export function parseOptions(argv: string[], table: OptionSpec[], command: string): ParsedOptions {
  const byName = new Map<string, { spec: OptionSpec; value: boolean | null }>();
  for (const spec of table) {
    for (const n of spec.names) byName.set(n, { spec, value: spec.kind === 'flag' ? true : null });
    if (spec.negative) byName.set(spec.negative, { spec, value: false });
  }
  const out: ParsedOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      out.help = true;
      continue;
    }
    let name = arg;
    let inline: string | undefined;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      name = arg.slice(0, eq);
      inline = arg.slice(eq + 1);
    }
    const hit = byName.get(name);
    if (!hit) {
      if (!arg.startsWith('-')) throw new UsageError(`Got unexpected extra argument (${arg})`, command);
      throw new UsageError(`No such option: ${name}`, command);
    }
    const { spec } = hit;
    if (spec.kind === 'flag') {
      out[spec.key] = hit.value ?? true;
      continue;
    }
    const raw = inline ?? argv[++i];
    if (raw === undefined) throw new UsageError(`Option '${name}' requires an argument.`, command);
    const value = convert(raw, spec, command);
    if (spec.multiple) ((out[spec.key] as string[] | undefined) ?? (out[spec.key] = [])).push(String(value));
    else out[spec.key] = value;
  }
  return out;
}

function convert(raw: string, spec: OptionSpec, command: string): string | number {
  const bad = (what: string) => new UsageError(`Invalid value for ${spec.names.map((n) => `'${n}'`).join(' / ')}: ${what}`, command);
  switch (spec.kind) {
    case 'int': {
      if (!/^[+-]?\d+$/.test(raw.trim())) throw bad(`'${raw}' is not a valid integer.`);
      const n = Number.parseInt(raw, 10);
      if (spec.min !== undefined && n < spec.min) throw bad(`${n} is not in the range x>=${spec.min}.`);
      return n;
    }
    case 'float': {
      const n = Number(raw);
      if (raw.trim() === '' || Number.isNaN(n)) throw bad(`'${raw}' is not a valid float.`);
      return n;
    }
    case 'choice':
      if (!spec.choices!.includes(raw)) {
        throw bad(`'${raw}' is not one of ${spec.choices!.map((c) => `'${c}'`).join(', ')}.`);
      }
      return raw;
    default:
      return raw;
  }
}
