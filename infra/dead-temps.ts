/**
 * Temporary files and dirs named by their maker, `<prefix><host>-<pid>-<anything>`, so that what a process of this
 * host left when it died (a half-made clone, a fork server's socket dir) can be told from what a live one still
 * uses, and removed by the next process that makes one.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hostId } from './host-groups';
import { processAlive } from './process-alive';

/** `<prefix><host>-<pid>-`: the start of the name of a temp this process makes (add what makes it unique). */
export const tempPrefixOf = (prefix: string): string => `${prefix}${hostId()}-${process.pid}-`;

/**
 * Removes the temps in `dir` that `prefix` names and a dead process of this host made: never another host's,
 * another user's, or a live process's. Returns the names removed.
 */
export function removeDeadTemps(dir: string, prefix: string): string[] {
  const ours = `${prefix}${hostId()}-`;
  const removed: string[] = [];
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(ours)) continue;
    const pid = Number(/^(\d+)-/.exec(name.slice(ours.length))?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    const p = path.join(dir, name);
    if (fs.lstatSync(p, { throwIfNoEntry: false })?.uid !== process.getuid?.()) continue;
    fs.rmSync(p, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
