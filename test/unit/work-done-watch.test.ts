/**
 * A task's lane is released once the last of its trials has its reward on disk: the activity's look at the job dir
 * comes every WORK_DONE_POLL_MS (harbor/work-done.ts), not at its next heartbeat tick (up to a second later). Timers
 * are jest's: the order of events is asserted, never a duration.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WORK_DONE_POLL_MS, watchWorkDone } from '../../harbor/work-done';
import { tempDir } from '../helpers/fixtures';

afterEach(() => jest.useRealTimers());

test('work done is told at the first look after the last reward appears, once, and never before it', () => {
  jest.useFakeTimers();
  const job = tempDir('vero-work-done-');
  const verifier = (trial: string) => fs.mkdirSync(path.join(job, trial, 'verifier'), { recursive: true });
  verifier('t__aaaaaaa');
  verifier('t__bbbbbbb');
  const told: string[] = [];
  const stop = watchWorkDone(job, 2, () => told.push('done'));
  jest.advanceTimersByTime(5 * WORK_DONE_POLL_MS);
  fs.writeFileSync(path.join(job, 't__aaaaaaa', 'verifier', 'reward.txt'), '1\n');
  jest.advanceTimersByTime(5 * WORK_DONE_POLL_MS);
  fs.writeFileSync(path.join(job, 't__bbbbbbb', 'verifier', 'reward.txt'), ''); // being written: not yet
  jest.advanceTimersByTime(WORK_DONE_POLL_MS);
  expect(told).toEqual([]);
  fs.writeFileSync(path.join(job, 't__bbbbbbb', 'verifier', 'reward.json'), '{"reward": 0}');
  fs.rmSync(path.join(job, 't__bbbbbbb', 'verifier', 'reward.txt'));
  jest.advanceTimersByTime(WORK_DONE_POLL_MS);
  expect(told).toEqual(['done']);
  jest.advanceTimersByTime(20 * WORK_DONE_POLL_MS);
  expect(told).toEqual(['done']);
  stop();
});

test('stopped before the rewards appear, it tells nothing', () => {
  jest.useFakeTimers();
  const job = tempDir('vero-work-done-');
  fs.mkdirSync(path.join(job, 't__ccccccc', 'verifier'), { recursive: true });
  const told: string[] = [];
  watchWorkDone(job, 1, () => told.push('done'))();
  fs.writeFileSync(path.join(job, 't__ccccccc', 'verifier', 'reward.txt'), '1\n');
  jest.advanceTimersByTime(10 * WORK_DONE_POLL_MS);
  expect(told).toEqual([]);
});
