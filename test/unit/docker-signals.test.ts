/**
 * Whether a container's stop can only make Docker wait (model/harbor/docker-signals.ts), and the `docker events` lines
 * vero reads its signals from (infra/docker-events.ts): the masks `docker top` prints, as the kernel reads them.
 */
import { containerInit, parseContainerProcesses, stopOnlyWaits } from '../../model/harbor/docker-signals';
import { parseContainerSignal } from '../../infra/docker-events';

// `docker top <id> -o pid,ppid,caught,blocked` of Harbor's main service (`sh -c "sleep infinity"`), as printed here.
const SH_SLEEP = [
  'PID                 PPID                CAUGHT              BLOCKED',
  '27182               27161               0000000000010002    0000000000000000',
  '27209               27182               0000000000000000    0000000000000000',
];

test('sh as PID 1 catches SIGINT and SIGCHLD only: a SIGTERM stop can only wait; SIGINT is caught; SIGKILL is no stop signal', () => {
  const ps = parseContainerProcesses(SH_SLEEP);
  expect(containerInit(ps)?.pid).toBe(27182);
  expect(stopOnlyWaits(ps, 15)).toBe(true);
  expect(stopOnlyWaits(ps, 2)).toBe(false);
  expect(stopOnlyWaits(ps, 9)).toBe(false);
  expect(stopOnlyWaits(ps, 0)).toBe(false);
  expect(stopOnlyWaits(ps, 65)).toBe(false);
});

test('a PID 1 that catches SIGTERM, or blocks it (an init waiting on its signals), is left its stop timeout', () => {
  const caught = parseContainerProcesses(['1 0 0000000000004000 0000000000000000']);
  const blocked = parseContainerProcesses(['1 0 0000000000000000 fffffffe7ffbfeff']);
  expect(stopOnlyWaits(caught, 15)).toBe(false);
  expect(stopOnlyWaits(blocked, 15)).toBe(false);
  // A real-time signal as the stop signal: signal 63 is bit 62 of the mask.
  expect(stopOnlyWaits(parseContainerProcesses(['1 0 4000000000000000 0']), 63)).toBe(false);
  expect(stopOnlyWaits(parseContainerProcesses(['1 0 0 0']), 63)).toBe(true);
});

test('processes that name no single PID 1, or output that is not the masks, are not taken to wait', () => {
  expect(stopOnlyWaits([], 15)).toBe(false);
  expect(stopOnlyWaits(parseContainerProcesses(['10 1 0 0', '11 2 0 0']), 15)).toBe(false); // two roots
  expect(stopOnlyWaits(parseContainerProcesses(['10 1 - 0', 'UID PID PPID C']), 15)).toBe(false);
  expect(stopOnlyWaits(parseContainerProcesses(['10 1 0 0 sh']), 15)).toBe(false); // another column set
});

test('a `docker events` kill line gives the container, its compose project and name, and the signal; other lines none', () => {
  const line = (action: string, attributes: Record<string, string>) =>
    JSON.stringify({ Type: 'container', Action: action, Actor: { ID: 'abc123', Attributes: attributes }, time: 1 });
  const project = { 'com.docker.compose.project': 't__abcdefg__env', name: 't__abcdefg__env-main-1' };
  expect(parseContainerSignal(line('kill', { ...project, signal: '15' }))).toEqual({
    id: 'abc123',
    project: 't__abcdefg__env',
    name: 't__abcdefg__env-main-1',
    signal: 15,
  });
  expect(parseContainerSignal(line('die', { ...project, exitCode: '137' }))).toBeNull();
  expect(parseContainerSignal(line('kill', { signal: '15' }))).toBeNull(); // not a compose container
  expect(parseContainerSignal(line('kill', { ...project, signal: 'TERM' }))).toBeNull();
  expect(parseContainerSignal('Error response from daemon')).toBeNull();
});
