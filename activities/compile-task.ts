import type { CompileTaskInput } from '../model/activity-payloads';
import { buildTaskDir, CompileResult } from '../compiler/compile';
import { asActivityFailure } from '../model/errors';

export type { CompileTaskInput };

/** The compiler as an activity. Payloads carry paths and names only: secret values never enter Temporal. */
export async function compileTaskDir(input: CompileTaskInput): Promise<CompileResult> {
  try {
    return await buildTaskDir(input.configFile, input.outDir, { skipSecretCheck: input.skipSecretCheck, params: input.params });
  } catch (e) {
    throw asActivityFailure(e); // a ConfigError: non-retryable, type ConfigError
  }
}
