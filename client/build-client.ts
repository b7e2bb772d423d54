/**
 * Runs the compiler: as the `buildTask` workflow when a Temporal server is given (durable, visible in the Web UI,
 * idempotent by build digest), in this process otherwise. The worker that runs it must see the same paths.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { BuildTaskInput } from '../activities/compile-task';
import { buildTaskDir, BuildResult } from '../compiler/compile';
import { ConfigError } from '../model/errors';
import { buildTask } from '../workflows';

/** The workflow id of a build: the build.yaml's bytes, the output dir and the options. */
function buildWorkflowId(input: BuildTaskInput): string {
  let text: Buffer;
  try {
    text = fs.readFileSync(input.configFile);
  } catch (e) {
    throw new ConfigError(
      `${input.configFile}: cannot read the build config (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  const digest = createHash('sha256')
    .update(text)
    .update('\0')
    .update(input.outDir)
    .update('\0')
    .update(String(!!input.skipSecretCheck))
    .update(input.params ? `\0${JSON.stringify(Object.entries(input.params).sort())}` : '')
    .update(input.registry ? `\0${JSON.stringify(input.registry)}` : '')
    .digest('hex');
  return `build-${digest.slice(0, 20)}`;
}

export interface BuildOutcome {
  result: BuildResult;
  /** The workflow that ran it (null: in process). */
  workflowId: string | null;
}

export async function runBuild(
  opts: {
    configFile: string;
    outDir: string;
    skipSecretCheck?: boolean;
    params?: Record<string, string>;
    registry?: { path?: string; url?: string };
  },
  temporal?: { client: Client; taskQueue: string; onStarted?: (workflowId: string) => void },
): Promise<BuildOutcome> {
  const input: BuildTaskInput = {
    configFile: path.resolve(opts.configFile),
    outDir: path.resolve(opts.outDir),
    ...(opts.skipSecretCheck ? { skipSecretCheck: true } : {}),
    ...(opts.params && Object.keys(opts.params).length ? { params: opts.params } : {}),
    ...(opts.registry?.path || opts.registry?.url
      ? { registry: opts.registry.path ? { path: path.resolve(opts.registry.path) } : { url: opts.registry.url! } }
      : {}),
  };
  if (!temporal) return { result: await buildTaskDir(input.configFile, input.outDir, input), workflowId: null };
  const workflowId = buildWorkflowId(input);
  const handle = await temporal.client.workflow.start(buildTask, {
    workflowId,
    taskQueue: temporal.taskQueue,
    args: [input],
    // The same build running: attach to it. Finished: build again (the output may have been removed; the
    // compiler replaces only its own previous output).
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    staticSummary: `vero build ${input.configFile} → ${input.outDir}`.slice(0, 200),
  });
  temporal.onStarted?.(workflowId);
  return { result: await handle.result(), workflowId };
}
