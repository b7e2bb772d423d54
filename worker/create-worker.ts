/** Connect, create, run: the worker of vero-harbor (workflows + activities on one task queue). */
import * as os from 'node:os';
import { DefaultLogger, LogLevel, NativeConnection, Runtime, Worker, WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../activities';
import { connectionExtrasFromEnv } from '../infra/temporal-connection';
import { telemetryPlugins } from './telemetry';
import { prebuiltWorkflowBundle } from './workflow-bundle';
import { deploymentOf, type Deployment } from '../infra/deployment';
import { hostId } from '../infra/host-groups';
import { defaultActivitySlots, workerIdentity } from '../model/worker-identity';
import { warmDefaultHarbor } from './harbor-warm-up';

export interface VeroWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Harbor processes at once on this worker (default: by memory, model/worker-identity.ts defaultActivitySlots). */
  maxConcurrentTasks?: number;
  /**
   * A workflow bundle (tests build one per file); default: the one `npm run build` made when it is current
   * (worker/workflow-bundle.ts), else `workflows/` bundled at start.
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** How long in-flight harbor runs get to finish on shutdown before they are cancelled. */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /**
   * Start the harbor fork server of the default launcher as the worker starts (worker/harbor-warm-up.ts; default
   * true). An eval sidecar's worker does not: its runs all have isolation, which is never forked.
   */
  warmHarbor?: boolean;
}

/** The longest a runTask heartbeat (and so a cancel) waits in the worker before it is sent (bench/cancel-latency.ts). */
export const HEARTBEAT_THROTTLE = '2s';

export async function createVeroWorker(opts: VeroWorkerOptions): Promise<{
  worker: Worker;
  connection: NativeConnection;
  deployment: Deployment;
  /** The harbor fork server's warm-up, in the background (worker/harbor-warm-up.ts): true once warm; false without one. */
  forkServer: Promise<boolean>;
}> {
  const connection = await NativeConnection.connect({ address: opts.address, ...connectionExtrasFromEnv() });
  // Which server and queue this worker serves: recorded with every harbor group it starts, so the host's reapers
  // of other deployments leave them alone.
  const deployment = await deploymentOf(connection.workflowService, opts.namespace, opts.taskQueue);
  const slots = opts.maxConcurrentTasks ?? defaultActivitySlots(os.totalmem());
  const plugins = telemetryPlugins();
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    // pid@host#slots: the orphan reaper tells this host's attempts from other hosts' by it, and start-eval the
    // capacity of the workers polling a queue.
    identity: workerIdentity(process.pid, hostId(), slots),
    ...workflowCode(opts.workflowBundle, plugins.length > 0),
    activities: createActivities(deployment),
    maxConcurrentActivityTaskExecutions: slots,
    shutdownGraceTime: opts.shutdownGraceTime ?? '30s',
    // A cancel reaches an activity only in the answer to one of its heartbeats, which the SDK would otherwise
    // throttle to 0.8 × heartbeat_timeout (48 s by default): a cancel then took that long to stop a harbor.
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
    plugins,
  });
  return { worker, connection, deployment, forkServer: opts.warmHarbor === false ? Promise.resolve(false) : warmDefaultHarbor() };
}

/**
 * The bundle given, else the prebuilt one when current, else the workflows to bundle now. Telemetry's plugin adds
 * its workflow interceptors at bundling time, so with it on the workflows are always bundled at start.
 */
function workflowCode(
  given: VeroWorkerOptions['workflowBundle'],
  plugins: boolean,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  if (given) return { workflowBundle: given };
  const prebuilt = plugins
    ? { stale: 'telemetry on: bundled with its interceptors' }
    : process.env.VERO_WORKFLOW_BUNDLE === '0'
      ? { stale: 'VERO_WORKFLOW_BUNDLE=0' }
      : prebuiltWorkflowBundle();
  if ('codePath' in prebuilt) return { workflowBundle: prebuilt };
  Runtime.instance().logger.debug(`bundling the workflows at start: ${prebuilt.stale}`);
  return { workflowsPath: require.resolve('../workflows') };
}

/**
 * The SDK logs every worker state change at INFO; CLI commands show warnings and above unless VERO_LOG_LEVEL
 * says otherwise. Must run before the first worker or connection is created. `ownSignals`: the command handles
 * SIGINT/SIGTERM itself (cli/interrupts.ts), and the SDK's runtime does not (its handler would race ours).
 */
export function installCliRuntimeLogger(opts: { ownSignals?: boolean } = {}): void {
  const level = (process.env.VERO_LOG_LEVEL ?? 'WARN').toUpperCase() as LogLevel;
  // VERO_LOG_FORMAT=json: one JSON object per line on stderr, for log collectors.
  const json = (process.env.VERO_LOG_FORMAT ?? '').toLowerCase() === 'json';
  const logger = json
    ? new DefaultLogger(level, (entry) => {
        const { timestampNanos, level: lvl, message, meta } = entry;
        process.stderr.write(
          `${JSON.stringify({ time: new Date(Number(timestampNanos / 1_000_000n)).toISOString(), level: lvl, message, ...meta })}\n`,
        );
      })
    : new DefaultLogger(level);
  try {
    Runtime.install({ logger, ...(opts.ownSignals ? { shutdownSignals: [] } : {}) });
  } catch {
    /* already installed (tests install their own) */
  }
}
