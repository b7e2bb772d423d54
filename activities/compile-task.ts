import type { BuildTaskInput } from '../model/evaluation/activity-payloads';
import { buildTaskDir, BuildResult } from '../compiler/compile';
import { asActivityFailure } from '../model/errors';

export type { BuildTaskInput };

/** The compiler as an activity. Payloads carry paths and names only: secret values never enter Temporal. */
export async function compileTaskDir(input: BuildTaskInput): Promise<BuildResult> {
  try {
    return await buildTaskDir(input.configFile, input.outDir, {
      skipSecretCheck: input.skipSecretCheck,
      params: input.params,
      ...(input.registry ? { registry: input.registry } : {}),
    });
  } catch (e) {
    throw asActivityFailure(e); // a ConfigError: non-retryable, type ConfigError
  }
}
