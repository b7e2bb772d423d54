/** The environment and OS user of a harbor process: untrusted candidate code sees nothing it was not given. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readEnvFile } from '../infra/env-file';
import type { EvalSettings } from '../model/eval-types';

export interface Isolation {
  env: Record<string, string>;
  cleanEnv: boolean;
  uid?: number;
  gid?: number;
}

/** uid/gid of a local user, from /etc/passwd; null when there is no such user. */
function lookupUser(name: string): { uid: number; gid: number; home: string } | null {
  try {
    for (const line of fs.readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name) return { uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '/' };
    }
  } catch {
    /* no passwd file */
  }
  return null;
}

function chownTree(dir: string, uid: number, gid: number): void {
  fs.chownSync(dir, uid, gid);
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) chownTree(p, uid, gid);
    else fs.lchownSync(p, uid, gid);
  }
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
