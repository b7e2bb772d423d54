/**
 * `npm run test:tiers` runs two jest processes side by side (test/setup/tiers.js): every test file must run in
 * exactly one of them, and every real-Harbor file (the only tests that make Docker objects) in the first, whose
 * single jest worker runs its files one after another.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

jest.setTimeout(120_000);

test('the two test tiers partition test/**/*.test.ts; the real-Harbor files are all in the first', () => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'test', 'setup', 'tiers.js'), '--check'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const tiers = JSON.parse(r.stdout) as { name: string; workers: number; files: string[] }[];
  expect(tiers.map((t) => t.name)).toEqual(['real-harbor', 'rest']);
  expect(tiers[0]!.workers).toBe(1);
  const all = fs
    .readdirSync(path.join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .map((f) => `test/${f.split(path.sep).join('/')}`)
    .filter((f) => f.endsWith('.test.ts'))
    .sort();
  expect(tiers.flatMap((t) => t.files).sort()).toEqual(all);
  const realHarbor = all.filter((f) => f.startsWith('test/real-harbor/'));
  expect(realHarbor.length).toBeGreaterThan(0);
  expect(tiers[0]!.files).toEqual(expect.arrayContaining(realHarbor));
  expect(tiers[1]!.files.filter((f) => f.startsWith('test/real-harbor/'))).toEqual([]);
});
