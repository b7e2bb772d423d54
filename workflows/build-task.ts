/**
 * `vero build` as a durable workflow: the compiler activity writes the task dir on a worker. The workflow id is
 * derived from the build config (client/build-client.ts), so a repeated build attaches to a running one.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { BuildTaskInput } from '../activities/compile-task';
import { FailureType } from '../model/failures';

const { compileTaskDir } = proxyActivities<Activities>({
  startToCloseTimeout: '10m',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: [FailureType.ConfigError] },
});

export async function buildTask(input: BuildTaskInput): ReturnType<Activities['compileTaskDir']> {
  return await compileTaskDir.executeWithOptions({ summary: `build ${input.configFile} → ${input.outDir}`.slice(0, 200) }, [input]);
}
