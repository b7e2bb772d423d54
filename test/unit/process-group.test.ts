/**
 * runInGroup / watchGroup: every child process runs in a group of its own, is stopped as a group, and outlives a
 * worker that dies (so that the next attempt can adopt it) without losing its output.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { groupAlive, runInGroup, watchGroup } from '../../infra/process-group';
import { ROOT, tempDir } from '../helpers/fixtures';
import { until } from '../helpers/process';

jest.setTimeout(30_000);

test('a group whose parent was SIGKILLed keeps writing to its log (no SIGPIPE) and can be watched to its end', async () => {
  const dir = tempDir('vero-pg-');
  const log = path.join(dir, 'run.log');
  const pidFile = path.join(dir, 'pid');
  // A parent process (standing for a worker) starts the group, records its pid, and is killed at once.
  const parent = spawn(
    process.execPath,
    [
      '-e',
      `const { runInGroup } = require(${JSON.stringify(path.join(ROOT, 'dist', 'infra', 'process-group.js'))});
       runInGroup(['bash', '-c', 'echo early; sleep 1; for i in $(seq 200); do echo "late line $i"; done; echo late >&2'], {
         cwd: ${JSON.stringify(dir)}, logFile: ${JSON.stringify(log)},
         onStart: (pid) => { require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(pid)); process.kill(process.pid, 'SIGKILL'); },
       });`,
    ],
    { stdio: 'ignore' },
  );
  await new Promise((r) => parent.on('exit', r));
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  const watched = await watchGroup(pid, {});
  expect(watched).toMatchObject({ cancelled: false, timedOut: false });
  expect(groupAlive(pid)).toBe(false);
  const text = fs.readFileSync(log, 'utf8');
  expect(text).toContain('late line 200');
  expect(text).toMatch(/late\n$/);
});

test('a cancel stops the whole group, grandchildren included', async () => {
  const dir = tempDir('vero-pg-');
  const ac = new AbortController();
  let pid = 0;
  const run = runInGroup(['bash', '-c', 'sleep 300 & sleep 300 & wait'], {
    cwd: dir,
    logFile: path.join(dir, 'run.log'),
    signal: ac.signal,
    graceMs: 500,
    onStart: (p) => (pid = p),
  });
  await until('the group to start', async () => pid > 0 && groupAlive(pid));
  ac.abort();
  const r = await run;
  expect(r.cancelled).toBe(true);
  expect(groupAlive(pid)).toBe(false);
});

test('a deadline stops the group and says so; stdout can go to a file of its own', async () => {
  const dir = tempDir('vero-pg-');
  const r = await runInGroup(['bash', '-c', 'echo out; echo err >&2; sleep 300'], {
    cwd: dir,
    logFile: path.join(dir, 'run.log'),
    stdoutFile: path.join(dir, 'out.txt'),
    deadline: Date.now() + 1000,
    graceMs: 500,
  });
  expect(r).toMatchObject({ timedOut: true, cancelled: false });
  expect(fs.readFileSync(path.join(dir, 'out.txt'), 'utf8')).toBe('out\n');
  expect(fs.readFileSync(path.join(dir, 'run.log'), 'utf8')).toBe('err\n');
});
