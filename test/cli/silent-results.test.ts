/**
 * Commands that used to succeed with a wrong result refuse instead, naming why: a `--param` the build file does not
 * use (a misspelt name was ignored), and `vero snapshot` where the sidecar's session is not (it wrote an empty one).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../helpers/fixtures';
import { runVero } from '../helpers/process';
import { setup } from '../helpers/sidecar';

jest.setTimeout(180_000);

test('vero build --param with a name the file does not use → exit 2 naming the file’s parameters', async () => {
  const file = path.join(tempDir(), 'build.yaml');
  fs.writeFileSync(file, 'task_name: t\nharbor:\n  environment: ${inner_env:-docker}\n  model: ${target_model}\n');
  const r = await runVero(['build', '-c', file, '--print-config', '--param', 'inner_envv=docker', '--param', 'target_model=m']);
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(`error: --param inner_envv: ${file} has no \${inner_envv} (its parameters: inner_env, target_model)\n`);
});

test('vero snapshot where the sidecar’s session is not → exit 2, nothing written', async () => {
  const s = await setup();
  const elsewhere = path.join(s.dir, 'serve-elsewhere.json');
  const admin = path.join(s.dir, 'no-such-admin-volume');
  fs.writeFileSync(elsewhere, JSON.stringify({ ...s.cfg, paths: { ...s.cfg.paths, admin_volume: admin } }));
  const out = path.join(s.dir, 'snap');
  const r = await runVero(['snapshot', '--config', elsewhere, '--out', out]);
  expect(r.stderr).toContain(`error: --config ${elsewhere}: the sidecar's session dir ${admin} is not on this machine`);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.code).toBe(2);
  expect(fs.existsSync(out)).toBe(false);
});
