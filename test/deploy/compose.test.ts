/**
 * docker-compose.dev.yml and the Dockerfile: parsed and checked here, `docker compose config` where the tool
 * exists, and the Temporal releases the file pins against the ones the project tests elsewhere (the cluster
 * tier's server, scripts/ensure-temporal-server; `vero dev`'s CLI, scripts/ensure-temporal). Brought up for real
 * in test/real-harbor/compose.test.ts.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { findTemporalCli } from '../../infra/temporal-cli';
import { searchAttributeSpecs } from '../../model/evaluation/search-attributes';
import { SUPPORTED_HARBOR_VERSIONS } from '../../model/harbor/version';
import { ROOT } from '../helpers/fixtures';

const composeFile = path.join(ROOT, 'docker-compose.dev.yml');
type Service = Record<string, unknown> & { image?: string; environment?: Record<string, string>; volumes?: string[] };
const c = parse(fs.readFileSync(composeFile, 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const script = (name: string) => fs.readFileSync(path.join(ROOT, 'scripts', name), 'utf8');
const pinIn = (text: string, variable: string) => text.match(new RegExp(`^${variable}="v?([^"]+)"$`, 'm'))?.[1];
const tagOf = (service: string) => c.services[service]!.image!.split(':')[1];

test('the dev compose file wires PostgreSQL, Temporal (schema, server, setup), the UI and workers', () => {
  expect(Object.keys(c.services).sort()).toEqual(['postgresql', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui', 'worker']);
  for (const s of ['postgresql', 'temporal-ui', 'worker']) expect(c.services[s]!.healthcheck).toBeDefined();
  expect(c.services.temporal!.depends_on).toEqual({ 'temporal-schema': { condition: 'service_completed_successfully' } });
  expect(c.services.worker!.depends_on).toEqual({ 'temporal-setup': { condition: 'service_completed_successfully' } });
  expect(c.services.worker!.environment).toMatchObject({ VERO_TEMPORAL_ADDRESS: 'temporal:7233' });
  expect(Object.keys(c.volumes)).toEqual(['postgres-data']);
  // Every search attribute the code sets is registered, and the setup waits until a query by all of them is accepted.
  const cmd = JSON.stringify(c.services['temporal-setup']!.command);
  for (const sa of searchAttributeSpecs()) {
    expect(cmd).toContain(sa);
    expect(cmd).toContain(`${sa.split('=')[0]} = `);
  }
  // Published on loopback only: a Temporal without auth is not offered to the network.
  for (const s of Object.values(c.services)) for (const p of (s.ports as string[] | undefined) ?? []) expect(p).toMatch(/^127\.0\.0\.1:/);
});

test("the workers get the host's Docker socket, its group and the shared dir at the same path, and nothing else of the host", () => {
  const w = c.services.worker!;
  expect(w.volumes).toEqual(['/var/run/docker.sock:/var/run/docker.sock', '${VERO_SHARED_DIR}:${VERO_SHARED_DIR}']);
  expect(w.group_add).toEqual([expect.stringMatching(/^\$\{VERO_DOCKER_GID:\?/)]);
  expect(w.environment!.VERO_HOME).toMatch(/^\$\{VERO_SHARED_DIR:\?.*\}\/home$/);
  for (const key of ['privileged', 'pid', 'network_mode', 'cap_add', 'user', 'devices', 'ipc', 'userns_mode', 'security_opt'])
    expect({ key, value: w[key] }).toEqual({ key, value: undefined });
  expect(w.restart).toBe('unless-stopped');
});

const composeAvailable = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
if (!composeAvailable) console.warn('*** skipped `docker compose config`: the compose plugin is not installed (scripts/ensure-docker) ***');
(composeAvailable ? test : test.skip)(
  'the real compose plugin accepts docker-compose.dev.yml, and refuses it without VERO_SHARED_DIR',
  () => {
    const env = { ...process.env, VERO_SHARED_DIR: '/srv/vero', VERO_DOCKER_GID: '999' };
    const r = spawnSync('docker', ['compose', '-f', composeFile, 'config', '-q'], { encoding: 'utf8', env });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const { VERO_SHARED_DIR: _, ...without } = env;
    const refused = spawnSync('docker', ['compose', '-f', composeFile, 'config', '-q'], { encoding: 'utf8', env: without });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('set VERO_SHARED_DIR');
  },
);

test('the worker image is multi-stage, holds a pinned supported Harbor with the Docker CLI and compose plugin, and runs as a non-root user', () => {
  expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
  expect(dockerfile).toContain('npm ci --omit=dev');
  expect(dockerfile).toMatch(/^USER vero$/m);
  expect(dockerfile).toMatch(/^CMD \["worker"\]$/m);
  const harbor = dockerfile.match(/^ARG HARBOR_VERSION=(\S+)$/m)?.[1];
  expect(SUPPORTED_HARBOR_VERSIONS).toContain(harbor);
  expect(dockerfile).toContain('"harbor==$HARBOR_VERSION"');
  expect(dockerfile).toMatch(/apt-get install .*docker-cli docker-compose/);
});

test('one Temporal: the compose file runs the cluster tier’s server and the UI `vero dev`’s CLI bundles', () => {
  const server = pinIn(script('ensure-temporal-server'), 'SERVER_VERSION');
  expect(server).toMatch(/^\d+\.\d+\.\d+$/);
  expect({ server: tagOf('temporal'), adminTools: tagOf('temporal-schema'), setup: tagOf('temporal-setup') }).toEqual({
    server,
    adminTools: server,
    setup: server,
  });
  // The CLI `vero dev` runs (scripts/ensure-temporal's pin) says which server and UI it embeds.
  const cliPin = pinIn(script('ensure-temporal'), 'TEMPORAL_BIN_VERSION');
  const version = spawnSync(findTemporalCli(), ['--version'], { encoding: 'utf8' }).stdout;
  const m = version.match(/^temporal version (\S+) \(Server (\S+), UI (\S+)\)/);
  expect(m?.[1]).toBe(cliPin);
  expect(tagOf('temporal-ui')).toBe(m![3]);
  // Its embedded server is the same release line; the patch difference is stated in docs/deploy.md.
  expect(m![2]!.split('.').slice(0, 2)).toEqual(server!.split('.').slice(0, 2));
  const deploy = fs.readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8');
  if (m![2] !== server) expect(deploy).toContain(`embeds server ${m![2]}`);
});

test('scripts/ensure-compose-images provides the images the compose file and the Dockerfile name', () => {
  const s = script('ensure-compose-images');
  expect({
    postgresql: pinIn(s, 'POSTGRES_IMAGE'),
    temporal: pinIn(s, 'SERVER_IMAGE'),
    adminTools: pinIn(s, 'ADMIN_TOOLS_IMAGE'),
    ui: `temporalio/ui:${pinIn(s, 'UI_VERSION')}`,
    node: pinIn(s, 'NODE_IMAGE'),
  }).toEqual({
    postgresql: c.services.postgresql!.image,
    temporal: c.services.temporal!.image,
    adminTools: c.services['temporal-schema']!.image,
    ui: c.services['temporal-ui']!.image,
    node: dockerfile.match(/^FROM (\S+)$/m)![1],
  });
});
