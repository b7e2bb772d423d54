/**
 * A CPU profile (.cpuprofile) summed by where the main thread spent its busy time: self time per function, each
 * with the nearest caller in this project's code (dist/…), so "fsync" reads as "fsync ← recordGroup".
 */
import * as fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(['(idle)', '(program)']);

export function profileSummary(file: string, top = 12): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const ownCaller = (id: number): string => {
    for (let p = parentOf.get(id); p !== undefined; p = parentOf.get(p)) {
      const f = byId.get(p)!.callFrame;
      if (f.url.includes('/dist/') && !f.url.includes('node_modules')) return f.functionName || '(anonymous)';
    }
    return '-';
  };
  const rows = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const f = byId.get(id)!.callFrame;
    if (IDLE.has(f.functionName)) continue;
    busyUs += us;
    const key = `${f.functionName || '(anonymous)'} ← ${ownCaller(id)}`;
    rows.set(key, (rows.get(key) ?? 0) + us);
  }
  const lines = [...rows.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, us]) => `    ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  return [`  main thread busy ${(busyUs / 1e6).toFixed(2)} s; by self time (function ← nearest vero caller):`, ...lines].join('\n');
}
