/**
 * Builds the `harbor run` command for one task. Pure. Every typed knob becomes its real flag (vero.md §6.1 #1);
 * the argv is identical on every retry of the same task, so Harbor can resume the job instead of failing
 * with FileExistsError.
 */
import { commandArgv } from '../command-line';
import type { HarborSection } from './config';
import { escapeFnmatch } from './fnmatch';
import { noRetryExceptionTypes } from './error-policy';

export interface HarborTaskRun {
  harbor: HarborSection;
  /** `registry_path` here is the file harbor reads (see `resolvedRegistryFile`). */
  source: { path?: string; dataset?: string; registry_path?: string; registry_url?: string };
  task: string;
  jobsDir: string;
  jobName: string;
  worktree: string;
  /** A Harbor job config file (`-c`) holding what Harbor has no flags for (retryBackoffConfig). */
  jobConfigFile?: string;
}

/**
 * The job config (`-c`) for what Harbor has no flags for, or null when none is set: the retry backoff
 * (`{retry: {…}}`) and Harbor 0.26's `override_error_policy`.
 */
export function retryBackoffConfig(
  h: HarborSection,
): { retry?: Record<string, number>; override_error_policy?: NonNullable<HarborSection['override_error_policy']> } | null {
  const retry: Record<string, number> = {};
  if (h.retry_wait_multiplier !== undefined) retry.wait_multiplier = h.retry_wait_multiplier;
  if (h.retry_min_wait_sec !== undefined) retry.min_wait_sec = h.retry_min_wait_sec;
  if (h.retry_max_wait_sec !== undefined) retry.max_wait_sec = h.retry_max_wait_sec;
  const overrides = h.override_error_policy && Object.keys(h.override_error_policy).length ? h.override_error_policy : null;
  if (!Object.keys(retry).length && !overrides) return null;
  return { ...(Object.keys(retry).length ? { retry } : {}), ...(overrides ? { override_error_policy: overrides } : {}) };
}

/**
 * `--retry-exclude` values: none (Harbor's default list stays), or the configured ones plus Harbor 0.26's policy
 * exclusions, which a non-empty list would otherwise drop; sorted, so the argv is the same on every attempt.
 */
function retryExcludeOf(h: HarborSection): string[] {
  if (h.retry_exclude.length === 0) return [];
  return [...new Set([...h.retry_exclude, ...noRetryExceptionTypes()])].sort();
}

export function launcher(harbor: HarborSection, worktree: string): string[] {
  const parts = commandArgv(harbor.command);
  return parts.map((p) => p.replaceAll('{worktree}', worktree));
}

/**
 * A `--ak/--ek key=value` item that Harbor's `parse_kwargs` reads back as the same value. It tries
 * `json.loads` first, then the Python literals True/False/None, and strips whitespace; so a string that
 * would parse as something else (`"true"`, `"007"`, `"[1]"`, `" x"`) is sent JSON-quoted.
 */
export function kwargItem(key: string, value: unknown): string {
  if (typeof value !== 'string') return `${key}=${JSON.stringify(value)}`;
  return `${key}=${stringSurvivesParseKwargs(value) ? value : JSON.stringify(value)}`;
}

function stringSurvivesParseKwargs(v: string): boolean {
  // A string that starts with a letter, `_` or `/` and has no outer whitespace is never valid JSON, except the
  // literals below; anything else (digits, brackets, quotes, signs) is quoted rather than second-guessed.
  if (v !== v.trim() || !/^[A-Za-z_/]/.test(v)) return false;
  return !/^(true|false|null|True|False|None|NaN|Infinity)$/.test(v);
}

/** [executable, ...args]. */
export function harborArgv(run: HarborTaskRun): string[] {
  const h = run.harbor;
  const argv = [...launcher(h, run.worktree), 'run'];
  if (run.source.path) argv.push('-p', run.source.path);
  else {
    argv.push('-d', run.source.dataset!);
    if (run.source.registry_path) argv.push('--registry-path', run.source.registry_path);
    else if (run.source.registry_url) argv.push('--registry-url', run.source.registry_url);
  }
  // An exact name: Harbor matches -i with fnmatch, so `t[1]` would also run `t1`.
  argv.push('-i', escapeFnmatch(run.task));
  argv.push('-a', h.agent);
  if (h.model) argv.push('-m', h.model);
  if (h.environment) argv.push('-e', h.environment);
  for (const [k, v] of Object.entries(h.agent_kwargs).sort(([a], [b]) => a.localeCompare(b))) argv.push('--ak', kwargItem(k, v));
  for (const [k, v] of Object.entries(h.agent_env).sort(([a], [b]) => a.localeCompare(b))) argv.push('--ae', `${k}=${v}`);
  for (const [k, v] of Object.entries(h.environment_kwargs).sort(([a], [b]) => a.localeCompare(b))) argv.push('--ek', kwargItem(k, v));
  argv.push('-k', String(h.n_attempts));
  argv.push('-r', String(h.max_retries));
  argv.push('-n', String(Math.min(h.n_concurrent_trials ?? h.n_attempts, h.n_attempts)));
  for (const e of h.retry_include) argv.push('--retry-include', e);
  for (const e of retryExcludeOf(h)) argv.push('--retry-exclude', e);
  // The flags override the file field by field (Harbor merges `retry.max_retries` etc. into it).
  if (run.jobConfigFile) argv.push('-c', run.jobConfigFile);
  const multipliers = [
    ['--timeout-multiplier', h.timeout_multiplier],
    ['--agent-timeout-multiplier', h.agent_timeout_multiplier],
    ['--verifier-timeout-multiplier', h.verifier_timeout_multiplier],
    ['--agent-setup-timeout-multiplier', h.agent_setup_timeout_multiplier],
    ['--environment-build-timeout-multiplier', h.environment_build_timeout_multiplier],
  ] as const;
  for (const [flag, v] of multipliers) if (v !== undefined) argv.push(flag, String(v));
  argv.push(...jobFlags(run.jobsDir, run.jobName));
  argv.push(...h.extra_args);
  return argv;
}

/**
 * The preflight: the task's own argv with `--dry-run`, which Harbor 0.25 answers locally in about a second
 * (agent kwargs against the agent's schema, the agent import, the task filter, the Docker engine) without
 * creating the job dir.
 */
export function preflightArgv(run: HarborTaskRun): string[] {
  return [...harborArgv(run), '--dry-run'];
}

/** Where a job goes and how harbor runs it: in `jobsDir` as `jobName`, unattended and quiet. */
function jobFlags(jobsDir: string, jobName: string): string[] {
  return ['-o', jobsDir, '--job-name', jobName, '-y', '-q'];
}

/** The outer agent of a compiled task's run: Harbor's oracle, or an agent by import path with its kwargs. */
export type OuterAgent = { kind: 'oracle' } | { kind: 'import'; importPath: string; pythonPath?: string; kwargs?: Record<string, string> };

/** The agent's flags of a compiled task's run; each kwarg as `kwargItem` sends it, in key order. */
export function outerAgentArgv(agent: OuterAgent): string[] {
  if (agent.kind === 'oracle') return ['-a', 'oracle'];
  const kwargs = Object.entries(agent.kwargs ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return ['--agent-import-path', agent.importPath, ...kwargs.flatMap(([k, v]) => ['--ak', kwargItem(k, v)])];
}

/**
 * The flags vero sets on a compiled task's run in a jobs dir of its own (`vero demo --optimize`, the real-Harbor
 * tier): the Docker environment, the job, the agent. A build's declared flags never set these (the build refuses
 * -e/-o/--job-name/-a).
 */
export function compiledJobArgs(run: { jobsDir: string; jobName: string; agent: OuterAgent }): string[] {
  return ['-e', 'docker', ...jobFlags(run.jobsDir, run.jobName), ...outerAgentArgv(run.agent)];
}

/**
 * `harbor run -p <compiled task>` (`vero run`, harbor/compiled-task-run.ts): the gateway's `--ae` items
 * (harbor/gateway-launch.ts) first, then the caller's arguments, which win where they repeat one.
 */
export function compiledTaskArgv(taskDir: string, gatewayArgs: string[], args: string[]): string[] {
  return ['run', '-p', taskDir, ...gatewayArgs, ...args];
}

/** Marks the harbor process of a job dir (its environment names the dir) so a later attempt can find an orphan. */
export const JOB_ENV = 'VERO_HARBOR_JOB_DIR';
