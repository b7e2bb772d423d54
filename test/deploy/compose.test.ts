/** docker-compose.dev.yml and the Dockerfile: parsed and checked here; `docker compose config` where the tool exists. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { searchAttributeSpecs } from '../../model/search-attributes';
import { ROOT } from '../helpers/fixtures';

const composeFile = path.join(ROOT, 'docker-compose.dev.yml');

test('the dev compose file wires PostgreSQL, Temporal, the UI and workers, with health checks and named volumes', () => {
  const c = parse(fs.readFileSync(composeFile, 'utf8')) as {
    services: Record<string, Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };
  expect(Object.keys(c.services).sort()).toEqual(['postgresql', 'search-attributes', 'temporal', 'temporal-ui', 'worker']);
  for (const s of ['postgresql', 'temporal', 'temporal-ui', 'worker']) expect(c.services[s]!.healthcheck).toBeDefined();
  expect(c.services.worker!.depends_on).toEqual({
    temporal: { condition: 'service_healthy' },
    'search-attributes': { condition: 'service_completed_successfully' },
  });
  expect(c.services.worker!.environment).toMatchObject({ VERO_TEMPORAL_ADDRESS: 'temporal:7233', VERO_TASK_QUEUE: 'vero-harbor' });
  expect(Object.keys(c.volumes).sort()).toEqual(['postgres-data', 'vero-data']);
  // Every search attribute the code sets is registered.
  const cmd = JSON.stringify(c.services['search-attributes']!.command);
  for (const sa of searchAttributeSpecs()) expect(cmd).toContain(sa);
});

const composeAvailable = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' }).status === 0;
if (!composeAvailable) console.warn('*** skipped `docker compose config`: the compose plugin is not installed (scripts/ensure-docker) ***');
(composeAvailable ? test : test.skip)('the real compose plugin accepts docker-compose.dev.yml', () => {
  const r = spawnSync('docker', ['compose', '-f', composeFile, 'config', '-q'], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
});

test('the worker image is multi-stage, installs production dependencies only, and runs as a non-root user', () => {
  const d = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  expect(d.match(/^FROM /gm)).toHaveLength(2);
  expect(d).toContain('npm ci --omit=dev');
  expect(d).toMatch(/^USER vero$/m);
  expect(d).toMatch(/^CMD \["worker"\]$/m);
});
