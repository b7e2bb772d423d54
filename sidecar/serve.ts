/** `vero serve`: starts the eval sidecar (ledger, registry, token, Temporal worker, HTTP API). */
import { homePaths } from '../model/paths';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connect } from '../client/connection';
import { MAX_CONFIG_BYTES, readRegularText } from '../infra/bounded-read';
import { startDevServer, DevServer } from '../infra/dev-server';
import { formatZodIssues } from '../model/config-issues';
import { ConfigError } from '../model/errors';
import { CONTAINER, ServeConfig } from '../model/compiled-task/serve-config';
import { refuseForeignHosts } from '../infra/host-check';
import { listenOn } from '../infra/listen';
import { findTemporalCli } from '../infra/temporal-cli';
import { createVeroWorker, installCliRuntimeLogger } from '../worker/create-worker';
import { writeCaseResources } from './case-resources';
import { Engine } from './engine';
import { Ledger } from './ledger';
import { CandidateRegistry } from './registry';
import { buildServer } from './server';
import { Gateway } from './gateway/gateway';
import { gatewayStatus } from './gateway/server';
import { createAdminToken } from './token';
import { lockSessionDir } from './session-lock';
import { restoreSession } from './session-snapshot';
import { TEMPORAL_DEFAULTS } from '../model/evaluation/config';
import { resolveInRegistry } from '../harbor/dataset-ref';
import type { FinalizeResult } from './finalize';
import { startWandbReporter } from './wandb-reporter';

export function loadServeConfig(file: string): ServeConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readRegularText(file, { maxBytes: MAX_CONFIG_BYTES }));
  } catch (e) {
    throw new ConfigError(`${file}: cannot read the serve config (${(e as Error).message.split('\n')[0]})`);
  }
  const parsed = ServeConfig.safeParse(raw);
  if (!parsed.success) throw new ConfigError(formatZodIssues(parsed.error.issues, file, ServeConfig));
  return parsed.data;
}

/** A baked registry dataset is the one the build pinned (its digest recomputed), or the sidecar does not start. */
export function verifyPinnedSource(cfg: ServeConfig, file: string): void {
  const s = cfg.mode_b?.task_source;
  if (!s || 'path' in s || s.registry_path === undefined || s.digest === undefined) return;
  const { problems } = resolveInRegistry(s.dataset, s.registry_path, s.digest);
  if (problems.length) throw new ConfigError(problems.map((p) => `${file}: mode_b.task_source: ${p}`).join('\n'));
}

/**
 * Before anything reads the session: a relaunch's rescued session restored into a session dir that has no state
 * yet (checked again here: fail closed), then the exposed splits' tasks written where the optimizer reads (rebuilt
 * whole on every start). The session lock is released when either fails.
 */
async function prepareSession(cfg: ServeConfig, lock: { release(): void }, log: (line: string) => void): Promise<void> {
  try {
    await restoreSession(cfg, log);
    writeCaseResources(cfg, log);
  } catch (e) {
    lock.release();
    throw e;
  }
}

interface ServeOptions {
  /** An existing Temporal server; default: a dev server of the sidecar's own, SQLite under the home dir. */
  address?: string;
  taskQueue?: string;
  port?: number;
  host?: string;
  /** The gateway's port (default the config's; 0 = any free port). */
  gatewayPort?: number;
}

/**
 * A sidecar is stopped with its container (Docker allows 10 s before SIGKILL): a short drain, after which running
 * harbors are left for the restarted sidecar to adopt. Its runs all have isolation, which is never forked: its
 * worker warms no harbor fork server.
 */
const SIDECAR_WORKER = { shutdownGraceTime: '5s', warmHarbor: false } as const;

export async function serve(
  configFile: string,
  opts: ServeOptions = {},
): Promise<{ close(): Promise<void>; port: number; gatewayPort?: number }> {
  installCliRuntimeLogger();
  const cfg = loadServeConfig(configFile);
  verifyPinnedSource(cfg, configFile);
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} sidecar: ${line}\n`);
  for (const dir of [cfg.paths.home, cfg.paths.admin_volume, cfg.paths.agent_volume]) fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(cfg.paths.admin_volume, 0o700);
  // One sidecar per session dir, before any state is read (a second one would reserve from a stale ledger).
  const lock = lockSessionDir(cfg.paths.admin_volume);
  await prepareSession(cfg, lock, log);
  const ledger = Ledger.open(path.join(cfg.paths.admin_volume, 'ledger.json'), cfg.budgets);
  const registry = CandidateRegistry.open(path.join(cfg.paths.admin_volume, 'candidates.json'));
  const token = createAdminToken(cfg.paths.token_path);
  // First, so a missing upstream key fails the start before anything runs.
  const gateway = cfg.gateway
    ? await Gateway.start(cfg.gateway, cfg.paths.admin_volume, process.env, log, {
        host: opts.host ?? cfg.host,
        ...(opts.gatewayPort !== undefined ? { port: opts.gatewayPort } : {}),
      }).catch((e: unknown) => {
        lock.release();
        throw e;
      })
    : null;

  let devServer: DevServer | null = null;
  let address = opts.address;
  if (!address) {
    devServer = await startDevServer({
      temporalCli: findTemporalCli(),
      dbFile: homePaths(cfg.paths.home).temporalDb,
      logFile: path.join(cfg.paths.home, 'temporal.log'),
    });
    address = devServer.address;
  }
  const taskQueue = opts.taskQueue ?? 'vero-sidecar';
  // The same connection settings (TLS, API key from the environment) as the worker's.
  const client = await connect(address, TEMPORAL_DEFAULTS.namespace);
  const { worker, connection: workerConnection } = await createVeroWorker({
    address,
    namespace: TEMPORAL_DEFAULTS.namespace,
    taskQueue,
    ...SIDECAR_WORKER,
  });
  const running = worker.run();
  const engine = new Engine(cfg, { client, taskQueue }, gateway);
  const wandb = startWandbReporter(cfg, engine, ledger, gateway, log);
  const app = buildServer({
    cfg,
    engine,
    ledger,
    registry,
    token,
    log,
    ...(gateway ? { gatewayStatus: () => gatewayStatus(gateway.spec, gateway.meter) } : {}),
    ...(wandb ? { onFinalized: (r: FinalizeResult) => wandb.finalized(r) } : {}),
  });
  // Answered only under loopback names, IPs, the listen host and the name main reaches it by (DNS rebinding).
  refuseForeignHosts(app, [opts.host ?? cfg.host, new URL(CONTAINER.sidecarUrl).hostname]);
  const close = async () => {
    await app.close();
    await gateway?.close();
    // The SDK's runtime may already be draining the worker on SIGTERM/SIGINT: shut down only a running one.
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch((e: unknown) => log(`worker stopped with an error: ${(e as Error).message}`));
    await workerConnection.close();
    await client.connection.close();
    await devServer?.stop();
    await wandb?.stop();
    lock.release();
  };
  // A port in use is said (and what started is stopped), not a stack trace.
  await listenOn(app, opts.host ?? cfg.host, opts.port ?? cfg.port, '--port').catch(async (e: unknown) => {
    await close();
    throw e;
  });
  const port = (app.server.address() as { port: number }).port;
  log(`serving ${cfg.task_name} (mode ${cfg.mode}) on ${opts.host ?? cfg.host}:${port}; Temporal ${address}`);
  return { port, ...(gateway ? { gatewayPort: gateway.port } : {}), close };
}
