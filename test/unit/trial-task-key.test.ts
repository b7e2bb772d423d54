/** The name a trial answers to (model/harbor/result.ts trialTaskKey): the task dir's basename, POSIX rules. */
import { trialTaskKey, type TrialResult } from '../../model/harbor/result';

const trial = (path: string): TrialResult => ({ task_name: 'org/x', task_id: { path } }) as unknown as TrialResult;

test('a backslash is part of a POSIX task dir name; a Windows path splits on it', () => {
  expect(trialTaskKey(trial('/data/bench/a\\b'))).toBe('a\\b');
  expect(trialTaskKey(trial('/data/bench/hello-world/'))).toBe('hello-world');
  expect(trialTaskKey(trial('relative/t[1]'))).toBe('t[1]');
  expect(trialTaskKey(trial('C:\\bench\\hello-world\\'))).toBe('hello-world');
});

test('package tasks answer to org/name; without a path, the task name', () => {
  expect(trialTaskKey({ task_name: 'x', task_id: { org: 'acme', name: 'fix' } } as unknown as TrialResult)).toBe('acme/fix');
  expect(trialTaskKey({ task_name: 'plain' } as unknown as TrialResult)).toBe('plain');
});
