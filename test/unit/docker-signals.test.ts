/**
 * Whether a container's stop can only make Docker wait (model/harbor/docker-signals.ts), and the `docker events`
 * lines vero reads its signals from (infra/docker-events.ts): what `docker top` prints, as the kernel reads the masks.
 */
import { idleHarborInit, parseContainerProcesses, stopOnlyWaits } from '../../model/harbor/docker-signals';
import { parseContainerSignal } from '../../infra/docker-events';

const HEADER = 'PID                 PPID                CAUGHT              BLOCKED             COMMAND';
/** `docker top <id> -o pid,ppid,caught,blocked,args` of Harbor's main service (`sh -c "sleep infinity"`), as printed here. */
const SH_SLEEP = [
  HEADER,
  '29056               29034               0000000000010002    0000000000000000    sh -c sleep infinity',
  '29084               29056               0000000000000000    0000000000000000    sleep infinity',
];
const top = (...lines: string[]) => parseContainerProcesses([HEADER, ...lines]);

test('Harbor’s idle main service, sh catching SIGINT and SIGCHLD only: a SIGTERM stop can only wait; SIGINT is caught; SIGKILL is no stop signal', () => {
  const ps = parseContainerProcesses(SH_SLEEP);
  expect(idleHarborInit(ps!)?.pid).toBe(29056);
  expect(stopOnlyWaits(ps, 15)).toBe(true);
  expect(stopOnlyWaits(ps, 2)).toBe(false);
  expect(stopOnlyWaits(ps, 9)).toBe(false);
  expect(stopOnlyWaits(ps, 0)).toBe(false);
  expect(stopOnlyWaits(ps, 65)).toBe(false);
  // A shell that execs its one command (bash) leaves `sleep infinity` as PID 1.
  expect(stopOnlyWaits(top('7 1 0000000000000000 0000000000000000 sleep infinity'), 15)).toBe(true);
});

test('a PID 1 that catches SIGTERM, or blocks it, is left its stop timeout', () => {
  expect(stopOnlyWaits(top('1 0 0000000000004000 0000000000000000 sh -c sleep infinity'), 15)).toBe(false);
  expect(stopOnlyWaits(top('1 0 0000000000000000 fffffffe7ffbfeff sh -c sleep infinity'), 15)).toBe(false);
  // A real-time signal as the stop signal: signal 63 is bit 62 of the mask.
  expect(stopOnlyWaits(top('1 0 4000000000000000 0 sleep infinity'), 63)).toBe(false);
  expect(stopOnlyWaits(top('1 0 0 0 sleep infinity'), 63)).toBe(true);
});

test('any container but Harbor’s idle service is left its timeout, whatever its masks say (a handler that ran once looks like none)', () => {
  // A Node PID 1 whose `once('SIGTERM')` handler ran already: the mask no longer shows it.
  expect(stopOnlyWaits(top('1 0 0000000100000602 0 node server.js'), 15)).toBe(false);
  // A task's own service, or an init.
  expect(stopOnlyWaits(top('1 0 0 0 postgres'), 15)).toBe(false);
  expect(stopOnlyWaits(top('1 0 0 0 /sbin/docker-init -- sh -c sleep infinity', '2 1 0 0 sh -c sleep infinity'), 15)).toBe(false);
  // Harbor's service with something else still running in it (an agent's leftover, the verifier's exec).
  expect(stopOnlyWaits(top('1 0 10002 0 sh -c sleep infinity', '2 1 0 0 sleep infinity', '3 0 0 0 python agent.py'), 15)).toBe(false);
  expect(stopOnlyWaits(top('1 0 10002 0 sh -c sleep infinity', '2 1 0 0 sleep 5'), 15)).toBe(false);
});

test('output that is not read whole is unknown: no cut (a truncated mask, another header, no output)', () => {
  expect(top('100 50 <00004602 00000000 sh -c sleep infinity', '120 100 00000000 00000000 sleep infinity')).toBeNull();
  expect(stopOnlyWaits(top('100 50 <00004602 00000000 sh -c sleep infinity', '120 100 0 0 sleep infinity'), 15)).toBe(false);
  expect(parseContainerProcesses(['PID PPID CAUGHT BLOCKED', '1 0 0 0'])).toBeNull();
  expect(parseContainerProcesses([])).toBeNull();
  expect(stopOnlyWaits(null, 15)).toBe(false);
  expect(stopOnlyWaits(top('10 1 0 0 sleep infinity', '11 2 0 0 sleep infinity'), 15)).toBe(false); // two roots
});

test('a `docker events` kill line gives the container, its compose project and name, and the signal; other lines none', () => {
  const line = (action: string, attributes: Record<string, string>) =>
    JSON.stringify({ Type: 'container', Action: action, Actor: { ID: 'abc123', Attributes: attributes }, time: 1 });
  const project = { 'com.docker.compose.project': 't__abcdefg__env', 'com.docker.compose.service': 'main', name: 't__abcdefg__env-main-1' };
  expect(parseContainerSignal(line('kill', { ...project, signal: '15' }))).toEqual({
    id: 'abc123',
    project: 't__abcdefg__env',
    service: 'main',
    name: 't__abcdefg__env-main-1',
    signal: 15,
  });
  expect(parseContainerSignal(line('die', { ...project, exitCode: '137' }))).toBeNull();
  expect(parseContainerSignal(line('kill', { signal: '15' }))).toBeNull(); // not a compose container
  expect(parseContainerSignal(line('kill', { ...project, signal: 'TERM' }))).toBeNull();
  expect(parseContainerSignal('Error response from daemon')).toBeNull();
});
