/**
 * A command harness's dir belongs to the harness's user, and so to the candidate code it runs: what the sidecar
 * (root) reads or writes there must not follow that user's links or block on its FIFOs. Real files, real links.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readReportText } from '../../infra/mode-a-files';
import { runInGroup } from '../../infra/process-group';
import { tempDir } from '../helpers/fixtures';

function harnessDir(): { dir: string; report: string; secret: string } {
  const dir = tempDir('vero-harness-');
  const secret = path.join(tempDir('vero-secret-'), 'key');
  fs.writeFileSync(secret, 'sk-proj-SECRET-never-shown\n');
  return { dir, report: path.join(dir, 'report.json'), secret };
}

test('a report is read when it is a regular file in the dir; none is null', () => {
  const { dir, report } = harnessDir();
  expect(readReportText(report, dir)).toBeNull();
  fs.writeFileSync(report, '{"status":"success"}');
  expect(readReportText(report, dir)).toBe('{"status":"success"}');
});

test('a report linked out of the dir, to a device or a FIFO, or too large, is refused without its content', () => {
  const { dir, report, secret } = harnessDir();
  fs.symlinkSync(secret, report);
  expect(() => readReportText(report, dir)).toThrow(/outside/);
  try {
    readReportText(report, dir);
  } catch (e) {
    expect((e as Error).message).not.toContain('SECRET');
  }
  fs.rmSync(report);
  fs.symlinkSync('/dev/zero', report);
  expect(() => readReportText(report, dir)).toThrow();
  fs.rmSync(report);
  execFileSync('mkfifo', [report]);
  expect(() => readReportText(report, dir)).toThrow(/not a regular file/); // answered at once: a FIFO never blocks the read
  fs.rmSync(report);
  fs.writeFileSync(report, Buffer.alloc((16 << 20) + 1, 0x20));
  expect(() => readReportText(report, dir)).toThrow(/over the/);
});

test('a child’s log swapped for a link is not followed: the linked file is left as it was', async () => {
  const { dir, secret } = harnessDir();
  const log = path.join(dir, 'harness.log');
  fs.symlinkSync(secret, log);
  await expect(runInGroup(['/bin/echo', 'overwritten'], { cwd: dir, logFile: log })).rejects.toThrow(/ELOOP|symbolic link/);
  expect(fs.readFileSync(secret, 'utf8')).toBe('sk-proj-SECRET-never-shown\n');
});
