/**
 * A production Temporal cluster for the cluster tier, on one machine without Docker: PostgreSQL (initdb,
 * pg_ctl) with Temporal's SQL schema, the Temporal server 1.32 built by scripts/ensure-temporal-server, the
 * default namespace and the project's search attributes. The same recipe as docs/deploy.md, on free ports.
 */
import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { freePort } from '../../infra/dev-server';
import { searchAttributeSpecs } from '../../model/evaluation/search-attributes';
import { findTemporalCli } from '../../infra/temporal-cli';
import { ROOT, tempDir } from './fixtures';

/** Why the cluster tier cannot run here, or null. */
export function clusterUnavailable(): string | null {
  for (const tool of ['initdb', 'pg_ctl', 'postgres']) if (spawnSync('which', [tool]).status !== 0) return `${tool} is not installed`;
  if (process.getuid?.() === 0 && spawnSync('id', ['postgres']).status !== 0) return 'running as root without a postgres user';
  return null;
}

export function serverBuild(): string {
  return execFileSync(path.join(ROOT, 'scripts', 'ensure-temporal-server'), {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

const asPostgres = (cmd: string[]): string[] => (process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd);

function run(cmd: string[], what: string): string {
  const r = spawnSync(cmd[0]!, cmd.slice(1), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

/**
 * A free port below 32768: the server stores membership ports in a PostgreSQL smallint, so the kernel's
 * ephemeral range (≥ 32768) is out.
 */
async function lowFreePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export interface Cluster {
  address: string;
  /** SIGKILL the server and start it again on the same database. */
  restartServer(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startCluster(): Promise<Cluster> {
  const build = serverBuild();
  const dir = tempDir('vero-cluster-');
  fs.chmodSync(dir, 0o755);
  const pgData = path.join(dir, 'pg');
  const sock = path.join(dir, 'sock');
  fs.mkdirSync(sock);
  if (process.getuid?.() === 0) {
    fs.chownSync(sock, Number(run(['id', '-u', 'postgres'], 'id')), Number(run(['id', '-g', 'postgres'], 'id')));
    fs.mkdirSync(pgData);
    fs.chownSync(pgData, Number(run(['id', '-u', 'postgres'], 'id')), Number(run(['id', '-g', 'postgres'], 'id')));
  }
  const pgPort = await freePort();
  run(asPostgres(['initdb', '-D', pgData, '-U', 'temporal', '--auth=trust', '-E', 'UTF8']), 'initdb');
  run(
    asPostgres([
      'pg_ctl',
      '-D',
      pgData,
      '-l',
      path.join(sock, 'postgres.log'),
      '-o',
      `-p ${pgPort} -k ${sock} -c listen_addresses=127.0.0.1`,
      '-w',
      'start',
    ]),
    'pg_ctl start',
  );
  const sql = (db: string, ...args: string[]) =>
    run(
      [
        path.join(build, 'bin', 'temporal-sql-tool'),
        '--plugin',
        'postgres12',
        '--ep',
        '127.0.0.1',
        '-p',
        String(pgPort),
        '-u',
        'temporal',
        '--db',
        db,
        ...args,
      ],
      `sql-tool ${db} ${args[0]}`,
    );
  for (const [db, schema] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    sql(db, 'create-database');
    sql(db, 'setup-schema', '-v', '0.0');
    sql(db, 'update-schema', '-d', path.join(build, 'schema', 'postgresql', 'v12', schema, 'versioned'));
  }

  // The module's development config, on this machine's free ports and this PostgreSQL.
  const config = parse(fs.readFileSync(path.join(build, 'config', 'development-postgres12.yaml'), 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const store of Object.values(config.persistence.datastores) as { sql: Record<string, unknown> }[]) {
    store.sql.connectAddr = `127.0.0.1:${pgPort}`;
    store.sql.password = '';
  }
  const frontend = await lowFreePort();
  for (const [name, svc] of Object.entries(config.services) as [string, { rpc: Record<string, number> }][]) {
    svc.rpc.grpcPort = name === 'frontend' ? frontend : await lowFreePort();
    svc.rpc.membershipPort = await lowFreePort();
    if (svc.rpc.httpPort) svc.rpc.httpPort = await lowFreePort();
  }
  config.global.pprof.port = await lowFreePort();
  config.global.metrics.prometheus.listenAddress = `127.0.0.1:${await lowFreePort()}`;
  config.clusterMetadata.clusterInformation.active.rpcAddress = `127.0.0.1:${frontend}`;
  const root = path.join(dir, 'server');
  fs.mkdirSync(path.join(root, 'config', 'dynamicconfig'), { recursive: true });
  fs.writeFileSync(path.join(root, 'config', 'development.yaml'), stringify(config));
  fs.copyFileSync(
    path.join(build, 'config', 'dynamicconfig', 'development-sql.yaml'),
    path.join(root, 'config', 'dynamicconfig', 'development-sql.yaml'),
  );

  const address = `127.0.0.1:${frontend}`;
  const cli = findTemporalCli();
  let server: ChildProcess;
  const startServer = async () => {
    const log = fs.openSync(path.join(dir, 'server.log'), 'a');
    server = spawn(
      path.join(build, 'bin', 'temporal-server'),
      ['--root', root, '--config', 'config', '--env', 'development', '--allow-no-auth', 'start'],
      {
        cwd: root,
        detached: true,
        stdio: ['ignore', log, log],
      },
    );
    fs.closeSync(log);
    const deadline = Date.now() + 120_000;
    while (
      spawnSync(cli, ['operator', 'cluster', 'health', '--address', address], { encoding: 'utf8' }).stdout?.includes('SERVING') !== true
    ) {
      if (Date.now() > deadline) {
        const lines = fs.readFileSync(path.join(dir, 'server.log'), 'utf8').split('\n');
        const problems = lines.filter((l) => /"level":"(error|fatal|warn)"|panic/i.test(l)).slice(-5);
        throw new Error(
          `the Temporal server did not become healthy:\n${(problems.length ? problems : lines.slice(-5)).join('\n').slice(0, 3000)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  };
  await startServer();
  run([cli, 'operator', 'namespace', 'create', '-n', 'default', '--address', address], 'namespace create');
  for (let i = 0; i < 120 && spawnSync(cli, ['operator', 'namespace', 'describe', '-n', 'default', '--address', address]).status !== 0; i++)
    await new Promise((r) => setTimeout(r, 500));
  for (const spec of searchAttributeSpecs()) {
    const [name, type] = spec.split('=') as [string, string];
    run(
      [cli, 'operator', 'search-attribute', 'create', '--name', name, '--type', type, '--namespace', 'default', '--address', address],
      `search attribute ${name}`,
    );
  }
  // The frontend learns new search attributes when its namespace cache refreshes: wait until a query by all of
  // them is accepted, or a workflow started right now would be refused.
  const probe = searchAttributeSpecs()
    .map((spec) => {
      const [name, type] = spec.split('=') as [string, string];
      return type === 'Double' ? `${name} = 0` : `${name} = 'probe'`;
    })
    .join(' AND ');
  for (let i = 0; i < 120 && spawnSync(cli, ['workflow', 'list', '--query', probe, '--address', address]).status !== 0; i++)
    await new Promise((r) => setTimeout(r, 500));
  const kill = (p: ChildProcess) => {
    try {
      process.kill(-p.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  };
  return {
    address,
    restartServer: async (downMs = 3_000) => {
      kill(server);
      await new Promise((r) => setTimeout(r, downMs));
      await startServer();
    },
    stop: async () => {
      kill(server);
      spawnSync(
        asPostgres(['pg_ctl', '-D', pgData, '-m', 'immediate', 'stop'])[0]!,
        asPostgres(['pg_ctl', '-D', pgData, '-m', 'immediate', 'stop']).slice(1),
      );
    },
  };
}
