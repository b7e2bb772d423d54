/** `vero build`: compile a build.yaml into a Harbor task dir (durably on a worker when a Temporal server is given). */
import { WorkflowFailedError } from '@temporalio/client';
import { Command, Option } from 'commander';
import { connect } from '../client/connection';
import { type BuildOutcome, runBuild } from '../client/build-client';
import { causeChain, ConfigError, exitCodeForFailure, ExitCode, failureTypes, WorkflowRunFailedError } from '../model/errors';
import { TEMPORAL_DEFAULTS } from '../model/evaluation/config';
import { type BuildParams, paramsNotInFile, parseParamFlags } from '../compiler/build-params';
import { MAX_CONFIG_BYTES, readRegularText } from '../infra/bounded-read';
import { printConfig } from '../compiler/print-config';

interface BuildFlags {
  config: string;
  out?: string;
  skipSecretCheck?: boolean;
  json?: boolean;
  address?: string;
  namespace: string;
  taskQueue: string;
  param: string[];
  printConfig?: boolean;
  registryPath?: string;
  registryUrl?: string;
}

/** The --param names the build file does not use (none when it cannot be read: the build then says why). */
function misspeltParams(file: string, params: BuildParams): string[] {
  if (!Object.keys(params).length) return [];
  let text: string;
  try {
    text = readRegularText(file, { maxBytes: MAX_CONFIG_BYTES });
  } catch {
    return [];
  }
  return paramsNotInFile(file, text, params);
}

export function registerBuildCommand(program: Command): void {
  program
    .command('build')
    .description('compile a build.yaml into a runnable Harbor task directory (optimizer workbench + eval sidecar)')
    .requiredOption('-c, --config <file>', 'build.yaml')
    .option('-o, --out <dir>', 'output task dir (replaced only when it is a previous build output); required unless --print-config')
    .option(
      '--param <NAME=VALUE>',
      'a value for ${NAME} in the build file (repeatable; over the environment)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option(
      '--registry-path <file>',
      "a local registry.json (Harbor's --registry-path) that holds the build's registry task source: it is pinned and checked against it, and a legacy dataset's tasks are built into the task",
    )
    .option(
      '--registry-url <url>',
      "a legacy registry.json URL (Harbor's --registry-url) the sidecar's Harbor resolves the task source from",
    )
    .option(
      '--print-config',
      "print what the file becomes in vero-harbor's schema (a vero build.yaml mapped), then exit; 2 if it would be refused",
    )
    .option('--skip-secret-check', 'build even when declared secrets are not set here (the compose file still requires them)')
    .addOption(
      new Option(
        '--address <host:port>',
        'build as a durable workflow on this Temporal server (a `vero worker` that sees the same paths runs it); default: in this process',
      ).env('VERO_BUILD_TEMPORAL_ADDRESS'),
    )
    .addOption(new Option('--namespace <ns>', 'Temporal namespace').env('VERO_TEMPORAL_NAMESPACE').default(TEMPORAL_DEFAULTS.namespace))
    .addOption(new Option('--task-queue <queue>', 'Temporal task queue').env('VERO_TASK_QUEUE').default(TEMPORAL_DEFAULTS.task_queue))
    .option('--json', 'machine-readable output')
    .addHelpText(
      'after',
      `
The file may be vero-harbor's build.yaml or scaleapi/vero's (detected; docs/vero-configs.md maps it field by
field: what cannot be honoured is refused by name). \${NAME}, \${NAME:-default} and \${NAME:?message} take
--param values, else the environment's.
With --address, the build is the workflow build-<digest of build.yaml, --out, options>: the Web UI shows it, a
repeated build attaches to a running one. The config, the agent repo and --out must be visible to the worker.`,
    )
    .action(build);
}

/** `vero build`: the flags checked, then the file printed (--print-config) or compiled, in process or on a worker. */
async function build(o: BuildFlags): Promise<void> {
  const { params, errors } = parseParamFlags(o.param);
  errors.push(...misspeltParams(o.config, params));
  if (o.registryPath && o.registryUrl) errors.push('--registry-path, --registry-url: give one registry, not both');
  if (errors.length) throw new ConfigError(errors.join('\n'));
  const registry = o.registryPath ? { path: o.registryPath } : o.registryUrl ? { url: o.registryUrl } : undefined;
  if (o.printConfig) {
    const printed = printConfig(o.config, params, registry);
    process.stdout.write(printed.text);
    if (printed.problems.length) throw new ConfigError(printed.problems.join('\n'));
    return;
  }
  if (!o.out) throw new ConfigError('-o, --out <dir>: required (unless --print-config)');
  const outcome = await buildTask(o, {
    configFile: o.config,
    outDir: o.out,
    skipSecretCheck: o.skipSecretCheck,
    params,
    ...(registry ? { registry } : {}),
  });
  const r = outcome.result;
  if (!o.json) for (const w of r.warnings ?? []) process.stderr.write(`warning: ${w}\n`);
  if (o.json) process.stdout.write(`${JSON.stringify({ ...r, workflowId: outcome.workflowId }, null, 2)}\n`);
  else
    process.stdout.write(
      `built ${r.taskName} (mode ${r.mode}) in ${r.outDir}\nbaseline ${r.baseCommit} from ${r.sourceCommit}\nrun it: ${r.gateway ? `vero run ${r.outDir} --` : `harbor run -p ${r.outDir}`} -a <optimizer agent> -m <model> -e docker\n`,
    );
}

/** The build, on the Temporal server of --address (as a workflow) or in this process; a failed build says why, with its exit code. */
async function buildTask(o: BuildFlags, request: Parameters<typeof runBuild>[0]): Promise<BuildOutcome> {
  const temporal = o.address
    ? {
        client: await connect(o.address, o.namespace),
        taskQueue: o.taskQueue,
        onStarted: (id: string) => void process.stderr.write(`build workflow ${id} on task queue ${o.taskQueue}; waiting for a worker…\n`),
      }
    : undefined;
  try {
    return await runBuild(request, temporal);
  } catch (e) {
    // The activity's ConfigError comes back as a failed workflow: the same exit code as in process.
    if (e instanceof WorkflowFailedError) {
      const configError = failureTypes(e).some((t) => exitCodeForFailure(t) === ExitCode.badInput);
      throw configError ? new ConfigError(causeChain(e.cause)) : new WorkflowRunFailedError(`the build failed: ${causeChain(e.cause)}`);
    }
    throw e;
  } finally {
    await temporal?.client.connection.close();
  }
}
