/** The environment and OS user of a harbor process: untrusted candidate code sees nothing it was not given. */
import { readEnvFile } from '../infra/env-file';
import { chownTree, lookupUser } from '../infra/os-user';
import type { EvalSettings } from '../model/evaluation/input';

export interface Isolation {
  env: Record<string, string>;
  cleanEnv: boolean;
  uid?: number;
  gid?: number;
}

/** The candidate's gateway variables (vero's names for an agent's own inference). */
const AGENT_INFERENCE_ENV = { key: 'VERO_AGENT_INFERENCE_API_KEY', baseUrl: 'VERO_AGENT_INFERENCE_BASE_URL' } as const;

/**
 * `task_services_use_upstream` (vero's meaning): the OpenAI variables, which task-owned services (user simulators,
 * graders) read, name the real upstream, its key taken from this process's environment; the gateway's token and
 * URL move to VERO_AGENT_INFERENCE_*, for the candidate's own calls. goose's OPENAI_HOST/OPENAI_BASE_PATH (the
 * gateway's) are dropped: with the upstream's key they would send it to the gateway.
 */
function upstreamForTaskServices(env: Record<string, string>, up: { keyEnv: string; baseUrl: string }): Record<string, string> {
  const out: Record<string, string> = {
    ...(env.OPENAI_API_KEY !== undefined ? { [AGENT_INFERENCE_ENV.key]: env.OPENAI_API_KEY } : {}),
    ...(env.OPENAI_BASE_URL !== undefined ? { [AGENT_INFERENCE_ENV.baseUrl]: env.OPENAI_BASE_URL } : {}),
    OPENAI_API_KEY: process.env[up.keyEnv] ?? '',
    OPENAI_BASE_URL: up.baseUrl,
    OPENAI_API_BASE: up.baseUrl,
  };
  delete env.OPENAI_HOST;
  delete env.OPENAI_BASE_PATH;
  return out;
}

/**
 * With `settings.isolation` (the eval sidecar): PATH, LANG, HOME, the named variables of this process's
 * environment, the variables of the isolation's env file (`{task}` in them: `task`), then `base`; run as `runAs` when it exists and this
 * process is root (the dirs it needs are handed to that user). Without: this process's environment plus `base`.
 */
export function isolationFor(s: EvalSettings, base: Record<string, string>, dirs: string[], task = 'harbor'): Isolation {
  if (!s.isolation) return { env: base, cleanEnv: false };
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: process.env.LANG ?? 'C.UTF-8' };
  for (const name of s.isolation.passEnv) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  if (s.isolation.envFile) Object.assign(env, readEnvFile(s.isolation.envFile, task));
  if (s.isolation.taskServicesUpstream) Object.assign(env, upstreamForTaskServices(env, s.isolation.taskServicesUpstream));
  const user = s.isolation.runAs ? lookupUser(s.isolation.runAs) : null;
  if (user && process.getuid?.() === 0) {
    for (const d of dirs) chownTree(d, user.uid, user.gid);
    return { env: { ...env, HOME: user.home, ...base }, cleanEnv: true, uid: user.uid, gid: user.gid };
  }
  return { env: { ...env, HOME: process.env.HOME ?? '/', ...base }, cleanEnv: true };
}
