/**
 * Whether a stop of a trial's container can only make Docker wait. `docker stop` (and `docker compose down`) sends
 * the stop signal to the container's PID 1, waits its stop timeout, then sends SIGKILL. PID 1 is its PID namespace's
 * init: the kernel drops a signal sent to it from outside the namespace unless it catches the signal or blocks it.
 * Harbor's main service idles as `sh -c "sleep infinity"` (a shell that execs its one command leaves `sleep
 * infinity` as PID 1): a program known to install no handler for the stop signal, whose only other process is its
 * `sleep`, which the stop does not signal. Stopping such a container can only end in the SIGKILL at the timeout,
 * with nothing running meanwhile but that `sleep`. Any other container (a task's own service, an init, anything
 * else still running in it) is not taken to wait, whatever its signal masks say: a handler that ran once and reset
 * itself looks like none.
 */

/** A process of a container, as `docker top <id> -o pid,ppid,caught,blocked,args` lists it (masks in hex, signal n is bit n − 1). */
export interface ContainerProcess {
  pid: number;
  ppid: number;
  caught: bigint;
  blocked: bigint;
  command: string;
}

/** The `-o` columns asked of `docker top`, and the header it prints for them. */
export const TOP_COLUMNS = 'pid,ppid,caught,blocked,args';
const TOP_HEADER = ['PID', 'PPID', 'CAUGHT', 'BLOCKED', 'COMMAND'];

/** One process line; null when it is not four numbers and a command (a truncated mask, say). */
function processOf(line: string): ContainerProcess | null {
  const m = /^\s*(\d+)\s+(\d+)\s+([0-9a-f]{1,16})\s+([0-9a-f]{1,16})\s+(\S.*?)\s*$/i.exec(line);
  if (!m) return null;
  return { pid: Number(m[1]), ppid: Number(m[2]), caught: BigInt(`0x${m[3]}`), blocked: BigInt(`0x${m[4]}`), command: m[5]! };
}

/** The processes of `docker top -o TOP_COLUMNS` output; null unless its header and every line read as expected. */
export function parseContainerProcesses(lines: string[]): ContainerProcess[] | null {
  const [header, ...rest] = lines;
  if (header?.trim().split(/\s+/).join(' ') !== TOP_HEADER.join(' ')) return null;
  const processes = rest.map(processOf);
  return processes.every((p) => p !== null) ? (processes as ContainerProcess[]) : null;
}

const IDLE_INIT = ['sh -c sleep infinity', '/bin/sh -c sleep infinity', 'sleep infinity'];

/** PID 1 when the container is Harbor's idle main service: `sh -c sleep infinity` and at most its `sleep`; else null. */
export function idleHarborInit(processes: ContainerProcess[]): ContainerProcess | null {
  const pids = new Set(processes.map((p) => p.pid));
  const roots = processes.filter((p) => !pids.has(p.ppid));
  const init = roots.length === 1 ? roots[0]! : null;
  if (!init || !IDLE_INIT.includes(init.command)) return null;
  const others = processes.filter((p) => p !== init);
  const idle = others.length <= 1 && others.every((p) => p.ppid === init.pid && p.command === 'sleep infinity');
  return idle ? init : null;
}

/** Whether PID 1 neither catches nor blocks `signal` (1–64): sent from outside, the kernel drops it. */
function initDropsSignal(init: ContainerProcess, signal: number): boolean {
  if (!Number.isInteger(signal) || signal < 1 || signal > 64) return false;
  const bit = 1n << BigInt(signal - 1);
  return (init.caught & bit) === 0n && (init.blocked & bit) === 0n;
}

/**
 * Whether a stop that sent `signal` to this container can end only in Docker's SIGKILL after the stop timeout: it is
 * Harbor's idle main service, and its PID 1 drops the signal. Unknown processes (null): no.
 */
export function stopOnlyWaits(processes: ContainerProcess[] | null, signal: number): boolean {
  const init = processes && idleHarborInit(processes);
  return !!init && signal !== 9 && initDropsSignal(init, signal);
}
