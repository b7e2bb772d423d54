/**
 * What a task's failed activity makes of its row, one function for a chunk's lanes and a race's
 * (workflows/activity-policy.ts): a config failure fails the workflow with its type (a broken task never looks like
 * a bad candidate), attempts used up make an error row with the cause (never a silent 0), a cancellation goes up to
 * the scope that asked for it, and a task a pause stopped is run again (null) unless its task is broken.
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { FailureType } from '../../model/failures';
import { failedTaskRow, taskJobDir } from '../../workflows/activity-policy';

const activityFailure = (cause: Error) =>
  new ActivityFailure('activity task failed', 'runTask', '7', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'worker@host', cause);
const configFailure = () =>
  activityFailure(ApplicationFailure.nonRetryable('task dir tasks/hello has no task.toml', FailureType.HarborConfigError));
const heartbeatTimeout = () => activityFailure(new TimeoutFailure('activity Heartbeat timeout', null, TimeoutType.HEARTBEAT));
const jobDir = taskJobDir('/home/v/runs/e1/r1', 'hello');

function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

test('a config failure fails the workflow: non-retryable, its type kept, the task named; even when a pause stopped it', () => {
  for (const requeued of [() => false, () => true]) {
    const err = thrownBy(() => failedTaskRow(configFailure(), 'hello', 3, jobDir, requeued));
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe(FailureType.HarborConfigError);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as ApplicationFailure).message).toBe('task "hello": task dir tasks/hello has no task.toml');
  }
});

test("attempts used up (worker crashes, timeouts) make an error row with the whole cause and the task's job dir", () => {
  const row = failedTaskRow(heartbeatTimeout(), 'hello', 3, jobDir);
  expect(row).toMatchObject({ task: 'hello', status: 'error', score: null, runs: 3, nTrials: 0, jobDir });
  expect(row.error).toContain('activity task failed');
  expect(row.error).toContain('activity Heartbeat timeout');
  expect(jobDir.startsWith('/home/v/runs/e1/r1/')).toBe(true);
});

test('a cancellation is rethrown as it is, bare or as an activity failure', () => {
  for (const cancel of [new CancelledFailure('cancelled'), activityFailure(new CancelledFailure('cancelled'))])
    expect(thrownBy(() => failedTaskRow(cancel, 'hello', 3, jobDir, () => true))).toBe(cancel);
});

test('a task a pause stopped, whatever its attempt ended with, is run again (null), not an error row', () => {
  expect(failedTaskRow(heartbeatTimeout(), 'hello', 3, jobDir, () => true)).toBeNull();
  expect(failedTaskRow(heartbeatTimeout(), 'hello', 3, jobDir, () => false)?.status).toBe('error');
});
