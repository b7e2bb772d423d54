/** What a compiled task's build declared for the outer `harbor run` that `vero run` starts (its vero-run.json). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../model/errors';
import { COMPILED_RUN_FILE, CompiledRun } from '../model/harbor/outer-run-args';

/** The task's declared outer-run flags and optimizer variables; none for a task built before the file existed. */
export function compiledRunOf(taskDir: string): CompiledRun {
  const file = path.join(taskDir, COMPILED_RUN_FILE);
  if (!fs.existsSync(file)) return { schema_version: 1, harbor_args: [], optimizer_env: [] };
  try {
    return CompiledRun.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
  } catch (e) {
    throw new ConfigError(`${file}: not a vero-run.json this vero reads (${(e as Error).message.split('\n')[0]}); rebuild the task`);
  }
}
