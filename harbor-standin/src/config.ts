/** `JobConfig` and `TrialConfig` as harbor 0.22 writes them (reference/harbor.md §3.1, §3.4). */
import { f } from './pyjson';
import { defaultRetryExclude } from './version';
import type { LocalTask } from './tasks';

/** The imitated version's default retry exclusions (./version.ts). */
export const DEFAULT_RETRY_EXCLUDE = defaultRetryExclude();

export const ENVIRONMENT_TYPES = [
  'docker',
  'apple-container',
  'singularity',
  'ack',
  'openshift',
  'gke',
  'daytona',
  'e2b',
  'modal',
  'runloop',
  'langsmith',
  'ec2',
  'novita',
  'islo',
  'tensorlake',
  'cwsandbox',
  'wandb',
  'use-computer',
  'cua-cloud',
  'blaxel',
  'opensandbox',
  'beam',
  'skypilot',
  'hf-sandbox',
  'hyperbrowser',
  'vercel',
];

/** The job's (and each trial's) timeout multipliers; without a spec, their defaults. */
function timeoutMultipliers(spec?: JobSpec): Record<string, unknown> {
  return {
    timeout_multiplier: f(spec?.timeoutMultiplier ?? 1),
    agent_timeout_multiplier: f(spec?.agentTimeoutMultiplier),
    verifier_timeout_multiplier: f(spec?.verifierTimeoutMultiplier),
    agent_setup_timeout_multiplier: f(spec?.agentSetupTimeoutMultiplier),
    environment_build_timeout_multiplier: f(spec?.environmentBuildTimeoutMultiplier),
  };
}

export function agentDefaults(): Record<string, unknown> {
  return {
    name: null,
    import_path: null,
    model_name: null,
    n_concurrent: null,
    concurrency_group: null,
    skills: [],
    override_timeout_sec: null,
    override_setup_timeout_sec: null,
    max_timeout_sec: null,
    resume_trajectory: false,
    load_trajectory: null,
    extra_allowed_hosts: [],
    kwargs: {},
    mcp_servers: [],
  };
}

export function environmentDefaults(): Record<string, unknown> {
  return {
    type: 'docker',
    import_path: null,
    force_build: false,
    delete: true,
    cpu_enforcement_policy: 'auto',
    memory_enforcement_policy: 'auto',
    override_cpus: null,
    override_memory_mb: null,
    override_storage_mb: null,
    override_gpus: null,
    override_tpu: null,
    mounts: null,
    extra_docker_compose: [],
    kwargs: {},
    extra_allowed_hosts: [],
  };
}

export function verifierDefaults(): Record<string, unknown> {
  return { override_timeout_sec: null, max_timeout_sec: null, disable: false };
}

export function retryDefaults(): Record<string, unknown> {
  return {
    max_retries: 0,
    include_exceptions: null,
    exclude_exceptions: [...DEFAULT_RETRY_EXCLUDE],
    wait_multiplier: f(1),
    min_wait_sec: f(1),
    max_wait_sec: f(60),
  };
}

export function taskConfigDefaults(): Record<string, unknown> {
  return { path: null, git_url: null, git_commit_id: null, name: null, ref: null, overwrite: false, download_dir: null, source: null };
}

export function jobDefaults(): Record<string, unknown> {
  return {
    job_name: null,
    jobs_dir: 'jobs',
    n_attempts: 1,
    install_only: false,
    ...timeoutMultipliers(),
    debug: false,
    n_concurrent_trials: 4,
    quiet: false,
    retry: retryDefaults(),
    environment: environmentDefaults(),
    verifier: verifierDefaults(),
    metrics: [],
    agents: [],
    user_agent: null,
    datasets: [],
    tasks: [],
    artifacts: [],
    extra_instruction_paths: [],
    extra_instructions: [],
    source_jobs: [],
  };
}

export interface AgentSpec {
  name: string | null;
  import_path: string | null;
  model_name: string | null;
  kwargs: Record<string, unknown>;
  env: Record<string, string>;
}

export interface JobSpec {
  jobName: string;
  jobsDir: string;
  nAttempts: number;
  nConcurrent: number;
  quiet: boolean;
  debug: boolean;
  timeoutMultiplier: number;
  agentTimeoutMultiplier: number | null;
  verifierTimeoutMultiplier: number | null;
  agentSetupTimeoutMultiplier: number | null;
  environmentBuildTimeoutMultiplier: number | null;
  maxRetries: number;
  retryInclude: string[] | null;
  retryExclude: string[];
  /** Harbor's backoff before a retry: min(min_wait_sec × wait_multiplier^attempt, max_wait_sec). */
  retryBackoff: { waitMultiplier: number; minWaitSec: number; maxWaitSec: number };
  environment: { type: string; import_path: string | null; kwargs: Record<string, unknown>; delete: boolean; force_build: boolean };
  disableVerification: boolean;
  agents: AgentSpec[];
  datasets: Record<string, unknown>[];
  tasks: Record<string, unknown>[];
  artifacts: string[];
}

/** The full `JobConfig` (before `exclude_defaults`). */
export function jobConfigFull(spec: JobSpec): Record<string, unknown> {
  return {
    ...jobDefaults(),
    job_name: spec.jobName,
    jobs_dir: spec.jobsDir,
    n_attempts: spec.nAttempts,
    ...timeoutMultipliers(spec),
    debug: spec.debug,
    n_concurrent_trials: spec.nConcurrent,
    quiet: spec.quiet,
    retry: {
      ...retryDefaults(),
      max_retries: spec.maxRetries,
      include_exceptions: spec.retryInclude,
      exclude_exceptions: spec.retryExclude,
      wait_multiplier: f(spec.retryBackoff.waitMultiplier),
      min_wait_sec: f(spec.retryBackoff.minWaitSec),
      max_wait_sec: f(spec.retryBackoff.maxWaitSec),
    },
    environment: { ...environmentDefaults(), ...spec.environment },
    verifier: { ...verifierDefaults(), disable: spec.disableVerification },
    agents: spec.agents.map((a) => agentWithEnv(a)),
    datasets: spec.datasets,
    tasks: spec.tasks,
    artifacts: spec.artifacts,
  };
}

function agentWithEnv(a: AgentSpec): Record<string, unknown> {
  const { name, import_path, model_name, kwargs, env } = a;
  // env: exclude_if empty
  return { ...agentDefaults(), name, import_path, model_name, kwargs, ...(Object.keys(env).length ? { env } : {}) };
}

/** The full `TrialConfig` of one trial. */
export function trialConfigFull(
  spec: JobSpec,
  task: LocalTask,
  agent: AgentSpec,
  trialName: string,
  jobDir: string,
  jobId: string,
): Record<string, unknown> {
  return {
    task: { ...taskConfigDefaults(), path: task.recordedPath, source: task.source },
    trial_name: trialName,
    trials_dir: jobDir,
    install_only: false,
    ...timeoutMultipliers(spec),
    agent: agentWithEnv(agent),
    user_agent: null,
    environment: { ...environmentDefaults(), ...spec.environment },
    verifier: { ...verifierDefaults(), disable: spec.disableVerification },
    artifacts: spec.artifacts,
    extra_instruction_paths: [],
    extra_instructions: [],
    job_id: jobId,
    source_trial: null,
  };
}

export function trialConfigDefaults(): Record<string, unknown> {
  return {
    task: taskConfigDefaults(),
    trials_dir: 'trials',
    install_only: false,
    ...timeoutMultipliers(),
    agent: agentDefaults(),
    user_agent: null,
    environment: environmentDefaults(),
    verifier: verifierDefaults(),
    artifacts: [],
    extra_instruction_paths: [],
    extra_instructions: [],
    job_id: null,
    source_trial: null,
  };
}
