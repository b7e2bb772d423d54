/** Worker identities carry host and slots; default slots follow memory, not cores. */
import { capacityNote } from '../../client/worker-capacity';
import { defaultActivitySlots, parseWorkerIdentity, workerIdentity } from '../../model/worker-identity';

const GiB = 1024 ** 3;

test('pid@host#slots round-trips; older and foreign identities still give their host', () => {
  expect(parseWorkerIdentity(workerIdentity(123, 'host-b', 48))).toEqual({ pid: 123, host: 'host-b', slots: 48 });
  expect(parseWorkerIdentity('123@host-b')).toEqual({ pid: 123, host: 'host-b', slots: null });
  expect(parseWorkerIdentity('my-python-worker')).toEqual({ pid: null, host: 'my-python-worker', slots: null });
  expect(parseWorkerIdentity('9@a@b#4')).toEqual({ pid: 9, host: 'a@b', slots: 4 });
});

test('slots are bounded by memory (a harbor at its peak each, half the memory), at least 8, at most 256', () => {
  expect(defaultActivitySlots(24 * GiB)).toBe(48);
  expect(defaultActivitySlots(2 * GiB)).toBe(8);
  expect(defaultActivitySlots(1024 * GiB)).toBe(256);
});

test('start-eval says when concurrency exceeds what the polling workers can run', () => {
  expect(capacityNote(8, 'q', { workers: 1, slots: 4 })).toBe(
    'note: concurrency 8, but the 1 worker(s) polling q run at most 4 task(s) at once; start more workers or raise --max-concurrent-tasks',
  );
  expect(capacityNote(8, 'q', { workers: 2, slots: 96 })).toBeNull();
  expect(capacityNote(8, 'q', { workers: 1, slots: null })).toBeNull();
  expect(capacityNote(8, 'q', { workers: 0, slots: 0 })).toMatch(/no worker is polling q yet/);
});
