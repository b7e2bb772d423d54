/**
 * The vero package tar (compiler/vero-package.ts) made from a small installation written here: what it holds, in
 * what order, and that its bytes depend on the files alone (not on when they were installed or how they are linked).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tar from 'tar';
import { keepForThrowawayBuilds, linkOrWriteVeroPackage, writeVeroPackage } from '../../compiler/vero-package';
import { tempDir } from '../helpers/fixtures';

const HERE = `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-gnu`;
const ELSEWHERE = `${process.arch === 'arm64' ? 'x86_64' : 'aarch64'}-unknown-linux-gnu`;

const LOCK = {
  packages: {
    '': { name: 'vero-harbor' },
    'node_modules/@temporalio/worker': {},
    'node_modules/@temporalio/core-bridge': {},
    'node_modules/left-pad': {},
    'node_modules/left-pad/node_modules/inner': {},
    'node_modules/left-pad/node_modules/dev-only': { dev: true },
    'node_modules/jest': { dev: true },
  },
};

const FILES: Record<string, string> = {
  'package.json': '{"name":"vero-harbor"}\n',
  'package-lock.json': JSON.stringify(LOCK),
  'bin/vero': '#!/bin/sh\n',
  'scripts/ensure-temporal': '#!/bin/sh\n',
  'sidecar/wandb_logger.py': 'import wandb\n', // the sidecar's W&B logger, a Python program beside dist/
  'sidecar/engine.ts': 'source\n', // TypeScript sources are not packed (dist/ holds the built code)
  'dist/cli/main.js': 'main\n',
  'dist/cli/main.js.map': '{}',
  'dist/bench/scale.js': 'bench\n',
  'dist/test/replay.js': 'test\n',
  'dist/compiler/test/fixture.js': 'kept\n', // only dist/test and dist/bench are left out
  'node_modules/@temporalio/worker/package.json': '{}',
  'node_modules/@temporalio/worker/index.js.map': '{}',
  'node_modules/@temporalio/worker/copy.js': 'pad\n',
  [`node_modules/@temporalio/core-bridge/releases/${HERE}/index.node`]: 'native\n',
  [`node_modules/@temporalio/core-bridge/releases/${ELSEWHERE}/index.node`]: 'other\n',
  'node_modules/@temporalio/core-bridge/sdk-core/lib.rs': 'rust\n',
  'node_modules/left-pad/index.js': 'pad\n',
  'node_modules/left-pad/node_modules/inner/index.js': 'inner\n',
  'node_modules/left-pad/node_modules/dev-only/index.js': 'dev\n',
  'node_modules/jest/index.js': 'jest\n',
};

/** An installation with FILES; `linked`: copy.js is a hard link to left-pad's index.js (as npm's cache may make it). */
function installation(mtime: Date, linked: boolean): string {
  const root = tempDir('vero-package-');
  for (const [rel, text] of Object.entries(FILES)) {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (linked && rel === 'node_modules/@temporalio/worker/copy.js') continue;
    fs.writeFileSync(file, text, { mode: rel.startsWith('bin/') || rel.startsWith('scripts/') ? 0o755 : 0o644 });
  }
  if (linked) fs.linkSync(path.join(root, 'node_modules/left-pad/index.js'), path.join(root, 'node_modules/@temporalio/worker/copy.js'));
  const touch = (p: string) => {
    if (fs.statSync(p).isDirectory()) for (const e of fs.readdirSync(p)) touch(path.join(p, e));
    fs.utimesSync(p, mtime, mtime);
  };
  touch(root);
  return root;
}

function entries(file: string): { path: string; type: string; mode: number }[] {
  const out: { path: string; type: string; mode: number }[] = [];
  tar.t({ file, sync: true, onReadEntry: (e) => void out.push({ path: e.path, type: e.type, mode: e.mode ?? 0 }) });
  return out;
}

test('the package holds the built code and the production closure, in path order, directories first', async () => {
  const dest = path.join(tempDir(), 'vero.tar');
  const sha = await writeVeroPackage(dest, installation(new Date('2021-03-04T05:06:07Z'), false));
  expect(sha).toBe(createHash('sha256').update(fs.readFileSync(dest)).digest('hex'));
  const listed = entries(dest);
  expect(listed.map((e) => e.path)).toEqual([
    'bin/',
    'bin/vero',
    'dist/',
    'dist/cli/',
    'dist/cli/main.js',
    'dist/compiler/',
    'dist/compiler/test/',
    'dist/compiler/test/fixture.js',
    'node_modules/',
    'node_modules/@temporalio/',
    'node_modules/@temporalio/core-bridge/',
    'node_modules/@temporalio/core-bridge/releases/',
    `node_modules/@temporalio/core-bridge/releases/${HERE}/`,
    `node_modules/@temporalio/core-bridge/releases/${HERE}/index.node`,
    'node_modules/@temporalio/worker/',
    'node_modules/@temporalio/worker/copy.js',
    'node_modules/@temporalio/worker/package.json',
    // A nested node_modules holds only its production entries; jest (dev) is not there at all.
    'node_modules/left-pad/',
    'node_modules/left-pad/index.js',
    'node_modules/left-pad/node_modules/',
    'node_modules/left-pad/node_modules/inner/',
    'node_modules/left-pad/node_modules/inner/index.js',
    'package-lock.json',
    'package.json',
    'scripts/',
    'scripts/ensure-temporal',
    'sidecar/',
    'sidecar/wandb_logger.py',
  ]);
  expect(listed.find((e) => e.path === 'bin/vero')!.mode).toBe(0o755);
  expect(listed.find((e) => e.path === 'dist/cli/main.js')!.mode).toBe(0o644);
});

test('the same files give the same bytes, whatever their times and hard links', async () => {
  const a = path.join(tempDir(), 'vero.tar');
  const b = path.join(tempDir(), 'vero.tar');
  const shaA = await writeVeroPackage(a, installation(new Date('2021-03-04T05:06:07Z'), false));
  const shaB = await writeVeroPackage(b, installation(new Date('2025-11-12T13:14:15Z'), true));
  expect(shaB).toBe(shaA);
  expect(fs.readFileSync(b).equals(fs.readFileSync(a))).toBe(true);
  // The hard-linked file is a file of its own in the tar.
  expect(entries(b).filter((e) => e.type !== 'File' && e.type !== 'Directory')).toEqual([]);
});

test('an installation without dist/ or without its production dependencies is refused with what to run', async () => {
  const root = installation(new Date(), false);
  fs.rmSync(path.join(root, 'node_modules/@temporalio/worker'), { recursive: true });
  await expect(writeVeroPackage(path.join(tempDir(), 'vero.tar'), root)).rejects.toThrow(/has no @temporalio\/worker; run `npm ci`/);
  fs.rmSync(path.join(root, 'dist'), { recursive: true });
  await expect(writeVeroPackage(path.join(tempDir(), 'vero.tar'), root)).rejects.toThrow(/dist is missing; run `npm run build`/);
});

test('throwaway builds link the package an earlier one kept, and write a new one once that file changed', async () => {
  const root = installation(new Date('2021-03-04T05:06:07Z'), false);
  const first = path.join(tempDir(), 'vero.tar');
  const sha = await linkOrWriteVeroPackage(first, root);
  keepForThrowawayBuilds(first, sha);
  const second = path.join(tempDir(), 'vero.tar');
  expect(await linkOrWriteVeroPackage(second, root)).toBe(sha);
  expect(fs.statSync(second).ino).toBe(fs.statSync(first).ino); // the same file, linked
  // The kept file changed (same path, same inode): the next build writes its own package.
  fs.appendFileSync(first, 'x');
  const third = path.join(tempDir(), 'vero.tar');
  expect(await linkOrWriteVeroPackage(third, root)).toBe(sha);
  expect(fs.statSync(third).ino).not.toBe(fs.statSync(first).ino);
  expect(createHash('sha256').update(fs.readFileSync(third)).digest('hex')).toBe(sha);
});
