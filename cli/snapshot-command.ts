/**
 * `vero snapshot`: the sidecar's session into one dir, for Harbor to rescue (the task's collect step); an offline W&B
 * run is ended, for Harbor to rescue its dir (sidecar/wandb-reporter.ts endOfflineRun).
 */
import * as fs from 'node:fs';
import { Command } from 'commander';
import { ConfigError } from '../model/errors';
import type { ServeConfig } from '../model/compiled-task/serve-config';

/**
 * A session is where the sidecar ran (the task's container): elsewhere (the host) its admin volume is not there,
 * and a snapshot would be an empty session a relaunch would resume from as if nothing had been spent.
 */
function refuseAbsentSession(configFile: string, adminVolume: string): void {
  if (!fs.existsSync(adminVolume) || !fs.statSync(adminVolume).isDirectory())
    throw new ConfigError(
      `--config ${configFile}: the sidecar's session dir ${adminVolume} is not on this machine: vero snapshot runs where the sidecar runs (inside the task's container), nothing was written`,
    );
}

/**
 * Ends the task's offline W&B run after the snapshot is written. It cannot fail the snapshot: a failing collect step
 * has the task copy the bare state files over the finished session, which a relaunch then refuses.
 */
async function endWandbRun(cfg: ServeConfig): Promise<void> {
  const { endOfflineRun } = require('../sidecar/wandb-reporter') as typeof import('../sidecar/wandb-reporter');
  try {
    process.stdout.write(`${await endOfflineRun(cfg)}\n`);
  } catch (e) {
    process.stderr.write(`could not end the offline W&B run (${(e as Error).message}); the session snapshot is complete\n`);
  }
}

export function registerSnapshotCommand(program: Command): void {
  program
    .command('snapshot')
    .description(
      "write the eval sidecar's session (ledger, candidates, jobs, meter, results shown, commits) for a relaunch to resume from; an offline W&B run is ended, so its dir can be rescued too",
    )
    .requiredOption('--config <serve.json>', 'the serve config written by `vero build`')
    .requiredOption('--out <dir>', 'the dir to write (replaced whole)')
    .action(async (o: { config: string; out: string }) => {
      const { takeSnapshot } = require('../sidecar/session-snapshot') as typeof import('../sidecar/session-snapshot');
      const { loadServeConfig } = require('../sidecar/serve') as typeof import('../sidecar/serve');
      const cfg = loadServeConfig(o.config);
      refuseAbsentSession(o.config, cfg.paths.admin_volume);
      const m = await takeSnapshot(cfg, o.out);
      process.stdout.write(`${o.out}: ${Object.keys(m.files).length} file(s) of the session of ${m.task_name}\n`);
      await endWandbRun(cfg);
    });
}
