/** The environment and OS user of a harbor process: untrusted candidate code sees nothing it was not given. */
import { readEnvFile } from '../infra/env-file';
import { chownTree, lookupUser } from '../infra/os-user';
import type { EvalSettings } from '../model/eval-input';

export interface Isolation {
  env: Record<string, string>;
  cleanEnv: boolean;
  uid?: number;
  gid?: number;
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
  const user = s.isolation.runAs ? lookupUser(s.isolation.runAs) : null;
  if (user && process.getuid?.() === 0) {
    for (const d of dirs) chownTree(d, user.uid, user.gid);
    return { env: { ...env, HOME: user.home, ...base }, cleanEnv: true, uid: user.uid, gid: user.gid };
  }
  return { env: { ...env, HOME: process.env.HOME ?? '/', ...base }, cleanEnv: true };
}
