/**
 * Memory of a process tree while a benchmark runs, sampled every second from /proc: the peak of the tree's
 * PSS (each process's share of the pages it uses, so the copy-on-write pages forked harbor runs share with their
 * fork server count once), the root's peak RSS (for `vero dev`: its worker), and how many processes there were.
 */
import * as fs from 'node:fs';

const kib = (text: string, field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);

function treePids(root: number): number[] {
  const parents = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      parents.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, ppid] of parents)
      if (!tree.has(pid) && tree.has(ppid)) {
        tree.add(pid);
        grew = true;
      }
  }
  return [...tree];
}

export interface TreeMemory {
  peakTreePssMiB: number;
  peakRootRssMiB: number;
  peakProcesses: number;
}

export function sampleTreeMemory(root: number, everyMs = 1000): { stop(): TreeMemory } {
  const peak: TreeMemory = { peakTreePssMiB: 0, peakRootRssMiB: 0, peakProcesses: 0 };
  const sample = () => {
    const pids = treePids(root);
    let pss = 0;
    for (const pid of pids) {
      try {
        pss += kib(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss');
      } catch {
        /* gone */
      }
    }
    let rootRss = 0;
    try {
      rootRss = kib(fs.readFileSync(`/proc/${root}/status`, 'utf8'), 'VmRSS');
    } catch {
      /* gone */
    }
    peak.peakTreePssMiB = Math.max(peak.peakTreePssMiB, pss / 1024);
    peak.peakRootRssMiB = Math.max(peak.peakRootRssMiB, rootRss / 1024);
    peak.peakProcesses = Math.max(peak.peakProcesses, pids.length);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

export const memoryText = (m: TreeMemory): string =>
  `peak tree PSS ${m.peakTreePssMiB.toFixed(0)} MiB over ≤ ${m.peakProcesses} processes, root RSS ${m.peakRootRssMiB.toFixed(0)} MiB`;
