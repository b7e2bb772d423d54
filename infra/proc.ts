/** Linux's /proc, read for a process this host runs: its command line and environment ('' / [] when it is gone). */
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
