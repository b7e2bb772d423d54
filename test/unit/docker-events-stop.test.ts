/**
 * The `docker events` stream ends when its last listener stops (infra/docker-events.ts), even when docker does not
 * end on its own: a `docker` that ignores SIGTERM and keeps its output open (a wrapper that does not exec, an ssh
 * helper holding the pipe) is killed with its shell's process group, and the stop returns within its bound.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { onContainerSignals } from '../../infra/docker-events';
import { tempDir } from '../helpers/fixtures';

const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

test('a docker that ignores the stop is killed with its shell, and the stop returns within its bound', async () => {
  const dir = tempDir('vero-docker-events-');
  const pidFile = path.join(dir, 'pid');
  fs.writeFileSync(path.join(dir, 'docker'), `#!/bin/sh\ntrap '' TERM\necho $$ > ${pidFile}\nwhile :; do sleep 0.2; done\n`, {
    mode: 0o755,
  });
  const unwatch = onContainerSignals({ PATH: `${dir}:${process.env.PATH}` }, () => undefined);
  for (let i = 0; i < 50 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  expect(alive(pid)).toBe(true);
  const t0 = Date.now();
  await unwatch();
  expect(Date.now() - t0).toBeLessThan(10_000); // (bounded: 2 s for the shell's stop, then the group is killed)
  for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  expect(alive(pid)).toBe(false);
});
