/** A worker of this host as `vero worker`, `vero dev` and `vero demo` run it: with the host's orphan reaper beside it. */
import { connect } from '../client/connection';
import type { Deployment } from '../infra/deployment';
import { TEMPORAL_DEFAULTS } from '../model/evaluation/config';
import { createVeroWorker } from '../worker/create-worker';
import { startOrphanReaper } from '../worker/orphan-reaper';

/**
 * The orphan reaper of this host (worker/orphan-reaper.ts): harbor groups that a dead worker left behind and
 * that no attempt will adopt are stopped. VERO_REAPER_INTERVAL_MS sets how often it looks (default 60 s).
 */
export async function hostReaper(address: string, deployment: Deployment): Promise<{ stop(): Promise<void> }> {
  const client = await connect(address, deployment.namespace);
  const reaper = startOrphanReaper({
    client,
    deployment,
    intervalMs: Number(process.env.VERO_REAPER_INTERVAL_MS) || 60_000,
    log: (message, meta) => process.stderr.write(`${new Date().toISOString()} [WARN] ${message} ${JSON.stringify(meta)}\n`),
  });
  return {
    stop: async () => {
      await reaper.stop();
      await client.connection.close();
    },
  };
}

/** An in-process worker with this host's orphan reaper; `stop` drains it (running harbors get its grace). */
export async function startWorker(
  address: string,
  opts: { taskQueue: string; maxConcurrentTasks?: number; shutdownGraceTime?: string },
): Promise<{ stop(): Promise<void> }> {
  const { worker, connection, deployment } = await createVeroWorker({ address, namespace: TEMPORAL_DEFAULTS.namespace, ...opts });
  const running = worker.run();
  const reaper = await hostReaper(address, deployment);
  return {
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await reaper.stop();
      await connection.close();
    },
  };
}
