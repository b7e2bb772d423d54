/** One sidecar per session dir: a live holder refuses a second one; a dead one's lock is taken over. */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { lockSessionDir } from '../../sidecar/session-lock';

test('a second sidecar on the same session dir is refused while the first lives; a dead one’s lock is taken over', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-lock-'));
  const other = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    const lockFile = path.join(dir, 'sidecar.lock');
    fs.writeFileSync(lockFile, JSON.stringify({ pid: other.pid, host: os.hostname(), at: '2026-01-01T00:00:00Z' }));
    expect(() => lockSessionDir(dir)).toThrow(
      `another eval sidecar (pid ${other.pid}, since 2026-01-01T00:00:00Z) serves this session dir`,
    );
    other.kill('SIGKILL');
    await new Promise((r) => other.once('exit', r));
    const lock = lockSessionDir(dir); // the holder is dead: taken over
    expect(JSON.parse(fs.readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
    expect(fs.existsSync(lockFile)).toBe(false);
    fs.writeFileSync(lockFile, '{"pid": 12'); // half-written by a crash
    lockSessionDir(dir).release();
  } finally {
    other.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
