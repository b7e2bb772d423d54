/**
 * This host's record of the harbor process groups its workers started: one small file per group, under a
 * host-local directory. A worker that dies leaves its groups running (so the next attempt can adopt them); the
 * orphan reaper (worker/orphan-reaper.ts) reads this record to stop those no attempt will adopt.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeJsonDurable } from './atomic-file';
import type { Deployment } from './deployment';
import { groupAlive } from './process-group';

/** This host's name for pid files, worker identities and the reaper (VERO_HOST_ID overrides the hostname). */
export function hostId(): string {
  return process.env.VERO_HOST_ID || os.hostname();
}

export interface HostGroup {
  /** The process group (harbor's pid). */
  pid: number;
  host: string;
  /** The process that runs or watches it (a worker); when it is gone, the group is an orphan. */
  ownerPid: number;
  namespace: string;
  /** The deployment (namespace id and task queue) of the worker that started it; absent in older records. */
  deployment?: Deployment;
  workflowId: string;
  activityId: string;
  /** The activity attempt that started (or last adopted) it. */
  attempt: number;
  jobDir: string;
  pidFile: string;
  startedAt: number;
}

function groupsDir(): string {
  return process.env.VERO_HOST_GROUPS_DIR ?? path.join(os.tmpdir(), `vero-harbor-${process.getuid?.() ?? 'user'}`, 'groups');
}

const fileOf = (pid: number, host: string) => path.join(groupsDir(), `${host}-${pid}.json`);

/**
 * Atomic (a reader never sees half a record) but not flushed: the record only matters while this host runs. A
 * worker that crashes leaves it in the page cache for the reaper; a host that crashes takes its groups with it,
 * and a record that survived a reboot would only name a pid that now belongs to another process. (An fsync here
 * held the worker's event loop ≈ 5 ms per task launch under load, in a CPU profile of `vero dev`.)
 */
export function recordGroup(g: HostGroup): void {
  writeJsonDurable(fileOf(g.pid, g.host), g, { fsync: false });
}

export function forgetGroup(pid: number, host = hostId()): void {
  fs.rmSync(fileOf(pid, host), { force: true });
}

/**
 * The groups recorded for this host: those alive, and those gone. A gone group's record stays until the reaper has
 * removed what its trials left in Docker (worker/orphan-reaper.ts), then `forgetGroup`: an engine that does not
 * answer at that moment is tried again at the next pass.
 */
export function hostGroupRecords(host = hostId()): { live: HostGroup[]; gone: HostGroup[] } {
  const out = { live: [] as HostGroup[], gone: [] as HostGroup[] };
  let names: string[];
  try {
    names = fs.readdirSync(groupsDir());
  } catch {
    return out;
  }
  for (const name of names.filter((n) => n.startsWith(`${host}-`) && n.endsWith('.json'))) {
    const file = path.join(groupsDir(), name);
    try {
      const g = JSON.parse(fs.readFileSync(file, 'utf8')) as HostGroup;
      (groupAlive(g.pid) ? out.live : out.gone).push(g);
    } catch {
      /* being written, or not ours */
    }
  }
  return out;
}
