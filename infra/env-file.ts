/**
 * Environment handed to a candidate by reference: a JSON file `{NAME: value}` on the trusted side (the gateway's
 * scoped token and base URL), read by the activity that starts the candidate, so the values never enter a
 * workflow's history.
 */
import { z } from 'zod';
import { writeJsonDurable } from './atomic-file';
import { readRegularText } from './bounded-read';

const EnvFile = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string());

/**
 * The variables of an env file. `{task}` in a value is replaced by `task` (URL-encoded): the gateway's base URL
 * names the task a candidate's model calls are for.
 */
export function readEnvFile(file: string, task?: string): Record<string, string> {
  const env = EnvFile.parse(JSON.parse(readRegularText(file, { maxBytes: 64 * 1024 })));
  if (task === undefined) return env;
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.split('{task}').join(encodeURIComponent(task))]));
}

export function writeEnvFile(file: string, env: Record<string, string>): void {
  writeJsonDurable(file, EnvFile.parse(env), { mode: 0o600 });
}
