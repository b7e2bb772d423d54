/** `vero view`: a local web app over Temporal visibility and the result files (cli/view-server.ts). */
import { Command } from 'commander';
import { settingsFrom } from '../client/eval-input';
import { uiLink } from '../client/connection';
import { defaultHome } from '../infra/eval-config-file';
import { resolveTasks } from '../harbor/task-source';
import { configDigest } from '../model/eval-identity';
import { commandConfig, configPath, ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { startViewServer } from './view-server';

interface ViewFlags extends ConnectionFlags {
  port: number;
  host: string;
  all?: boolean;
}

export function registerViewCommand(program: Command): void {
  withConnection(
    program
      .command('view')
      .description(
        "a local web app over the evaluations: score per candidate in commit order (best so far, baseline), each evaluation's tasks and trials with links to harbor logs and files, each trial's page (its ATIF trajectory as a transcript, paged, beside its reward and verifier output), two candidates side by side and, for a task they score differently, their trajectories step by step with where they diverged (read-only, from the home only); Ctrl-C stops it",
      )
      .option('--port <n>', 'port to listen on (0: any free one)', parseIntFlag('--port'), 8234)
      .option('--host <host>', 'address to listen on (loopback by default: the pages show file contents)', '127.0.0.1')
      .option('--all', 'every evaluation on the server, whatever its config (default with -c: that config only)'),
  ).action(async (o: ViewFlags) => {
    const conn = connectionSettings(o);
    const file = configPath(o);
    const cfg = file ? commandConfig(file) : null;
    const client = await connectTo(conn);
    const { app, url } = await startViewServer({
      client,
      home: cfg?.home ?? defaultHome(),
      ...(cfg ? { agentRepo: cfg.agent_repo } : {}),
      ...(cfg && !o.all ? { configDigest: configDigest(resolveTasks(cfg), settingsFrom(cfg)) } : {}),
      scope: cfg && !o.all ? `of ${file}` : `on ${conn.address} (namespace ${conn.namespace})`,
      uiLink: (id) => uiLink(conn.uiUrl, conn.namespace, id),
      host: o.host,
      port: o.port,
    });
    process.stdout.write(`vero view: ${url}  (Ctrl-C stops it)\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await app.close();
  });
}
