/** Files Harbor (or a candidate) wrote are read without hanging, flooding or escaping the jobs dir. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadTrials } from '../../harbor/collate';
import { tempDir } from '../helpers/fixtures';

const trial = (name: string) =>
  JSON.stringify({
    task_name: name,
    trial_name: `${name}__abc`,
    task_id: { path: `/ds/${name}` },
    verifier_result: { rewards: { reward: 1 } },
  });

test('a FIFO, a device, or a symlink out of the jobs dir is reported as unreadable, never read or scored', () => {
  const jobs = tempDir();
  const outside = path.join(tempDir(), 'result.json');
  fs.writeFileSync(outside, trial('escaped'));
  const job = path.join(jobs, 'job');
  const mk = (trialDir: string) => {
    fs.mkdirSync(path.join(job, trialDir), { recursive: true });
    return path.join(job, trialDir, 'result.json');
  };
  fs.mkdirSync(job, { recursive: true });
  fs.writeFileSync(path.join(job, 'config.json'), '{}');
  fs.writeFileSync(path.join(job, 'lock.json'), '{}');
  spawnSync('mkfifo', [mk('fifo__abc')]);
  fs.symlinkSync('/dev/zero', mk('zero__abc'));
  fs.symlinkSync(outside, mk('escaped__abc'));
  fs.writeFileSync(mk('ok__abc'), trial('ok'));
  fs.symlinkSync(path.join(job, 'ok__abc', 'result.json'), mk('inside__abc')); // a link within the jobs dir is fine

  const loaded = loadTrials(jobs); // returns: a FIFO does not block it
  expect(loaded.trials.map((t) => t.result.task_name).sort()).toEqual(['ok', 'ok']);
  const reasons = Object.fromEntries(loaded.invalid.map((i) => [path.basename(path.dirname(i.file)), i.reason]));
  expect(reasons['fifo__abc']).toMatch(/a FIFO, not a regular file/);
  expect(reasons['zero__abc']).toMatch(/resolves to \/dev\/zero, outside/);
  expect(reasons['escaped__abc']).toMatch(/outside/);
});
