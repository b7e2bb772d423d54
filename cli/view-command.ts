/** `vero view`: a local web app over Temporal visibility and the result files (cli/view-server.ts). */
import * as fs from 'node:fs';
import { Command } from 'commander';
import { settingsFrom } from '../client/eval-input';
import { uiLink } from '../client/connection';
import { defaultHome } from '../infra/eval-config-file';
import { resolveTasks } from '../harbor/task-source';
import { configDigest } from '../model/evaluation/identity';
import { ConfigError } from '../model/errors';
import { commandConfig, configPath, ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { startViewServer } from './view-server';
import { sessionDirOf } from './view-session-data';

interface ViewFlags extends ConnectionFlags {
  port: number;
  host: string;
  all?: boolean;
  session?: string;
}

/** --session: a dir on this machine (a rescued vero-session/, the trial dir holding it, or a session dir). */
function sessionFlag(dir: string | undefined): { session?: string } {
  if (dir === undefined) return {};
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw new ConfigError(
      `--session ${dir}: not a directory on this machine (give a rescued vero-session/ dir or the trial dir holding it)`,
    );
  return { session: sessionDirOf(dir) };
}

export function registerViewCommand(program: Command): void {
  withConnection(
    program
      .command('view')
      .description(
        "a local web app over the evaluations: score per candidate in commit order (best so far, baseline), each evaluation's tasks and trials with links to harbor logs and files, each trial's page (its ATIF trajectory as a transcript, paged, beside its reward and verifier output), two candidates side by side and, for a task they score differently, their trajectories step by step with where they diverged, each race (every candidate's confidence sequence against the leader, where it was eliminated) and, with --session, a compiled task's sidecar evaluations with each early-stopped one's sequence (read-only: evaluation files from the home only, session files from the --session dir only); Ctrl-C stops it",
      )
      .option('--port <n>', 'port to listen on (0: any free one)', parseIntFlag('--port'), 8234)
      .option('--host <host>', 'address to listen on (loopback by default: the pages show file contents)', '127.0.0.1')
      .option('--all', 'every evaluation on the server, whatever its config (default with -c: that config only)')
      .option(
        '--session <dir>',
        "a compiled task's sidecar session (a rescued vero-session/ dir, the trial dir holding it, or the sidecar's admin dir): its evaluations and early stops at /session",
      ),
  ).action(async (o: ViewFlags) => {
    const session = sessionFlag(o.session);
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
      ...session,
    });
    process.stdout.write(`vero view: ${url}  (Ctrl-C stops it)\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await app.close();
  });
}
