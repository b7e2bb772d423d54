/**
 * CPU of a process tree while a benchmark runs, from /proc: snapshot the tree before and after, and say where
 * the CPU-seconds went (per command name, its own and its reaped children's: a harbor run that ended shows in
 * the worker's reaped ticks).
 */
import * as fs from 'node:fs';

const CLOCK_TICKS = 100; // USER_HZ on Linux

export interface ProcCpu {
  pid: number;
  ppid: number;
  comm: string;
  /** Its own user + system ticks. */
  own: number;
  /** Its reaped children's ticks (a harbor run ended shows here, in the worker's). */
  reaped: number;
}

/** Every process of the tree under `root`, with its own and its reaped children's CPU ticks. */
export function treeCpu(root: number): ProcCpu[] {
  const stats = fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((pid): ProcCpu | null => {
      try {
        const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
        const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
        return { pid: Number(pid), ppid: Number(f[1]), comm, own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
      } catch {
        return null;
      }
    })
    .filter((s): s is ProcCpu => s !== null);
  const inTree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const s of stats) {
      if (inTree.has(s.pid) || !inTree.has(s.ppid)) continue;
      inTree.add(s.pid);
      grew = true;
    }
  }
  return stats.filter((s) => inTree.has(s.pid));
}

export const treeCpuSec = (procs: ProcCpu[]): number => procs.reduce((a, s) => a + s.own + s.reaped, 0) / CLOCK_TICKS;

/** Where the CPU went between two snapshots of a tree: per command name, its own and its reaped children's seconds. */
export function cpuBreakdown(before: ProcCpu[], after: ProcCpu[]): string {
  const was = new Map(before.map((p) => [p.pid, p]));
  const by = new Map<string, number>();
  const add = (k: string, ticks: number) => ticks > 0 && by.set(k, (by.get(k) ?? 0) + ticks);
  for (const p of after) {
    const b = was.get(p.pid);
    add(p.comm, p.own - (b?.own ?? 0));
    add(`reaped by ${p.comm}`, p.reaped - (b?.reaped ?? 0));
  }
  return [...by.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([k, t]) => `${k} ${(t / CLOCK_TICKS).toFixed(1)}`)
    .join(', ');
}
