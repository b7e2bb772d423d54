/** Linux's /proc, read for a process this host runs: its command line, environment and start time ('' / [] / null when it is gone). */
import * as fs from 'node:fs';

const read = (pid: number, what: 'cmdline' | 'environ'): string[] => {
  try {
    return fs.readFileSync(`/proc/${pid}/${what}`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
};

/** The process's argv, joined by spaces. */
export const procCmdline = (pid: number): string => read(pid, 'cmdline').join(' ');

/** Whether the process's environment has `key=value`. */
export const procHasEnv = (pid: number, key: string, value: string): boolean => read(pid, 'environ').includes(`${key}=${value}`);

/**
 * When the process started (clock ticks since boot, /proc/<pid>/stat's 22nd field): with the pid, it names one
 * process for as long as the host runs, so a reused pid is never mistaken for it.
 */
export function procStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
