/**
 * The build host's sealing secret is made once: first builds started together (separate processes, as two
 * `vero build`s are) end on one secret, the file holds it whole, and none of them read a partial file.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tempDir } from '../helpers/fixtures';

const MODULE = path.join(__dirname, '..', '..', 'dist', 'infra', 'host-seal-secret.js');
const CREATORS = 8;

/** A process that waits for `startAt` (so all of them race), then reads (or makes) the secret and prints it. */
function creator(file: string, startAt: number): Promise<{ code: number | null; out: string; err: string }> {
  const script = `while (Date.now() < ${startAt}); process.stdout.write(require(${JSON.stringify(MODULE)}).hostSealSecret().toString('hex'));`;
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, VERO_SEAL_SECRET_FILE: file } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

test('creators started together each get the one secret the file holds', async () => {
  const dir = tempDir('vero-seal-secret-');
  try {
    for (let round = 0; round < 3; round++) {
      const file = path.join(dir, `home-${round}`, 'seal-secret');
      const startAt = Date.now() + 1500; // past every child's start-up
      const results = await Promise.all(Array.from({ length: CREATORS }, () => creator(file, startAt)));
      expect(results.map((r) => r.err)).toEqual(Array<string>(CREATORS).fill(''));
      expect(results.map((r) => r.code)).toEqual(Array<number>(CREATORS).fill(0));
      const onDisk = fs.readFileSync(file, 'utf8');
      expect(onDisk).toMatch(/^[0-9a-f]{64}$/);
      expect(results.map((r) => r.out)).toEqual(Array<string>(CREATORS).fill(onDisk));
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(path.dirname(file))).toEqual(['seal-secret']); // no temp file left
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
