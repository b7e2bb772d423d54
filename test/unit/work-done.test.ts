/** When a task's harbor has done its work (harbor/work-done.ts): every trial has a reward on disk that Harbor can read. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { rewardedTrials, workDone } from '../../harbor/work-done';
import { tempDir } from '../helpers/fixtures';

function trial(job: string, name: string, files: Record<string, string>): void {
  fs.mkdirSync(path.join(job, name, 'verifier'), { recursive: true });
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(job, name, 'verifier', f), text);
}

test('a trial counts once its verifier wrote a readable reward; the job once every trial did', () => {
  const job = tempDir();
  expect(workDone(path.join(job, 'missing'), 1)).toBe(false);
  trial(job, 'a__1', { 'test-stdout.txt': 'running' }); // the verifier runs: no reward yet
  trial(job, 'b__2', { 'reward.txt': '' }); // being written, or empty: Harbor fails it (RewardFileEmptyError)
  trial(job, 'c__3', { 'reward.txt': 'not-a-number\n' });
  trial(job, 'd__4', { 'reward.json': '[1]' });
  expect(rewardedTrials(job)).toBe(0);
  trial(job, 'e__5', { 'reward.txt': '0.5\n' });
  trial(job, 'f__6', { 'reward.json': '{"pass": 1}' });
  fs.writeFileSync(path.join(job, 'result.json'), '{}'); // the job's own files are not trials
  expect(rewardedTrials(job)).toBe(2);
  expect(workDone(job, 2)).toBe(true);
  expect(workDone(job, 3)).toBe(false);
});
