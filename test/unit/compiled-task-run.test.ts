/**
 * A compiled task's run (`vero demo --optimize`, the real-Harbor tier) is a CLI process: a harbor that cannot
 * start ends it as the failure table says (HarborNotFound: exit 2), in one line, with no stack.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCompiledTask } from '../../harbor/compiled-task-run';
import { reportError } from '../../cli/main';
import { FAILURES } from '../../model/failures';
import { ensuredHarborFrom } from '../../infra/foreground';
import { tempDir } from '../helpers/fixtures';

test('a harbor launcher that is not there: exit 2 from the failure table, one line, no stack', async () => {
  const dir = tempDir();
  const taskDir = path.join(dir, 'task');
  fs.mkdirSync(taskDir);
  const missing = path.join(dir, 'no-such-harbor');
  const failure = await runCompiledTask({
    harbor: missing,
    harborFrom: ensuredHarborFrom('0.25.0'), // as `vero demo --optimize` names its harbor
    taskDir,
    jobsDir: path.join(dir, 'jobs'),
    jobName: 'oracle',
    agent: { kind: 'oracle' },
  }).then(
    () => null,
    (e: unknown) => e,
  );
  const printed: string[] = [];
  const write = jest.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => printed.push(String(s)) > 0);
  let exitCode: number;
  try {
    exitCode = reportError(failure);
  } finally {
    write.mockRestore();
  }
  expect(exitCode).toBe(FAILURES.HarborNotFound.exitCode);
  expect(exitCode).toBe(2);
  expect(printed.join('')).toBe(
    `error: harbor launcher not found: "${missing}" (${ensuredHarborFrom('0.25.0')}); is Harbor installed and on PATH?\n`,
  );
  // Nothing of it was run: the log holds no output.
  expect(fs.readFileSync(path.join(dir, 'jobs', 'oracle.harbor.log'), 'utf8')).toBe('');
});
