/**
 * A worker's identity as Temporal shows it (pollers, `lastWorkerIdentity` of activities): `<pid>@<host>#<slots>`,
 * so the orphan reaper can tell this host's attempts from other hosts' and a client can tell how many tasks the
 * workers polling a queue can run at once.
 */

export interface WorkerIdentity {
  pid: number | null;
  host: string;
  /** Activity slots (harbor processes at once); null when the identity does not say. */
  slots: number | null;
}

export function workerIdentity(pid: number, host: string, slots: number): string {
  return `${pid}@${host}#${slots}`;
}

/** Parses `pid@host#slots` (and the older `pid@host`); anything else is a host of its own, slots unknown. */
export function parseWorkerIdentity(identity: string): WorkerIdentity {
  const m = /^(\d+)@(.+?)(?:#(\d+))?$/.exec(identity);
  if (!m) return { pid: null, host: identity, slots: null };
  return { pid: Number(m[1]), host: m[2]!, slots: m[3] !== undefined ? Number(m[3]) : null };
}

/** Per harbor process (with its docker compose children) at its peak on a real trial: 228 MB (bench/harbor-rss.sh). */
const HARBOR_PEAK_RSS_BYTES = 256 * 1024 * 1024;

/**
 * Default activity slots of a worker: harbor processes wait on Docker or a remote sandbox, so slots are bounded
 * by memory (half of it, at a harbor's peak RSS each), not by cores; at least 8, at most 256.
 */
export function defaultActivitySlots(totalMemBytes: number): number {
  return Math.max(8, Math.min(256, Math.floor(totalMemBytes / 2 / HARBOR_PEAK_RSS_BYTES)));
}
