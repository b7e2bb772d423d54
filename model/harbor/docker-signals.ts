/**
 * Whether a container's stop signal can only make Docker wait. `docker stop` (and `docker compose down`) sends the
 * stop signal to the container's PID 1, waits its stop timeout, then sends SIGKILL. PID 1 is its PID namespace's
 * init: the kernel drops a signal sent to it from outside the namespace unless it catches the signal or blocks it
 * (a blocked one is queued, to be taken later). When PID 1 does neither, the signal changes nothing, and the only
 * outcome of the stop is the SIGKILL after the timeout (Harbor's main service, `sh -c "sleep infinity"`, is such a
 * PID 1: `sh` catches SIGINT and SIGCHLD only).
 */

/** A process of a container, as `docker top <id> -o pid,ppid,caught,blocked` lists it (masks in hex, signal n is bit n − 1). */
export interface ContainerProcess {
  pid: number;
  ppid: number;
  caught: bigint;
  blocked: bigint;
}

/** The processes of `docker top -o pid,ppid,caught,blocked` output (its header line and malformed lines left out). */
export function parseContainerProcesses(lines: string[]): ContainerProcess[] {
  return lines.flatMap((line) => {
    const cols = line.trim().split(/\s+/);
    if (cols.length !== 4 || !cols.every((c) => /^[0-9a-f]+$/i.test(c))) return [];
    const [pid, ppid, caught, blocked] = cols as [string, string, string, string];
    return [{ pid: Number(pid), ppid: Number(ppid), caught: BigInt(`0x${caught}`), blocked: BigInt(`0x${blocked}`) }];
  });
}

/** The container's PID 1: its one process whose parent is outside the container (the runtime's shim). */
export function containerInit(processes: ContainerProcess[]): ContainerProcess | null {
  const pids = new Set(processes.map((p) => p.pid));
  const roots = processes.filter((p) => !pids.has(p.ppid));
  return roots.length === 1 ? roots[0]! : null;
}

/** Whether PID 1 neither catches nor blocks `signal` (1–64): sent from outside, the kernel drops it. */
export function initDropsSignal(init: ContainerProcess, signal: number): boolean {
  if (!Number.isInteger(signal) || signal < 1 || signal > 64) return false;
  const bit = 1n << BigInt(signal - 1);
  return (init.caught & bit) === 0n && (init.blocked & bit) === 0n;
}

/**
 * Whether a stop that sent `signal` to this container can end only in Docker's SIGKILL after the stop timeout: the
 * container's processes (`docker top`) name one PID 1, and it drops the signal. Unknown processes: no.
 */
export function stopOnlyWaits(processes: ContainerProcess[], signal: number): boolean {
  const init = containerInit(processes);
  return init !== null && signal !== 9 && initDropsSignal(init, signal);
}
