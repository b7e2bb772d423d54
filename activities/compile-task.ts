import { ApplicationFailure } from '@temporalio/common';
import { compileTask as compile, CompileResult } from '../compiler/compile';
import { ConfigError } from '../model/errors';

export interface CompileTaskInput {
  configFile: string;
  outDir: string;
  skipSecretCheck?: boolean;
}

/** The compiler as an activity. Payloads carry paths and names only: secret values never enter Temporal. */
export async function compileTask(input: CompileTaskInput): Promise<CompileResult> {
  try {
    return await compile(input.configFile, input.outDir, { skipSecretCheck: input.skipSecretCheck });
  } catch (e) {
    if (e instanceof ConfigError) throw ApplicationFailure.nonRetryable(e.message, 'BuildConfigError');
    throw e;
  }
}
