/** What a compiled task's build declared for the outer `harbor run` that `vero run` starts (its vero-run.json). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { COMPILED_RUN_FILE, CompiledRun } from '../model/outer-run-args';

/** The task's declared outer-run flags and optimizer variables; none for a task built before the file existed. */
export function compiledRunOf(taskDir: string): CompiledRun {
  const file = path.join(taskDir, COMPILED_RUN_FILE);
  if (!fs.existsSync(file)) return { schema_version: 1, harbor_args: [], optimizer_env: [] };
  return CompiledRun.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
}
