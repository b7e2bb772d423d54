/**
 * What is on disk around a task's harbor runs, across attempts: the jobs dir and the dir harbor runs in, the pid
 * file of its harbor, a previous attempt's harbor still running (an orphan to adopt), a job that harbor finished
 * without its worker, the trials to re-run on resume, a job set aside, and the failures earlier attempts counted.
 */
import { procHasEnv, procStartTime } from '../infra/proc';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadTrials, readTrialFile } from './collate';
import { writeFileDurable } from '../infra/atomic-file';
import { hostId } from '../infra/host-groups';
import { groupAlive } from '../infra/process-group';
import { readJson } from '../infra/json-file';
import { JobLock } from '../model/harbor/schemas';
import { harborJobFiles } from '../model/harbor/paths';
import { addUsage, hasValidReward, NO_USAGE, type Usage, usageOf } from '../model/harbor/trial-ranking';
import { JOB_ENV } from '../model/harbor/argv';

export interface PidFile {
  pid: number;
  host: string;
  /** When that harbor started (ms since epoch): an adopted run keeps its original deadline. */
  startedAt?: number;
  /** Its /proc start time (infra/proc.ts procStartTime): identifies it when its environment cannot (a forked harbor). */
  procStart?: string;
}

/** What a runTask attempt carries to the next one in its heartbeat details (Temporal keeps the last). */
export interface AttemptProgress {
  attempt: number;
  trialsWithResults: number;
  /**
   * Attempts that ended because Harbor produced no rewarded trial. Only these count against
   * `task_attempts`; an attempt lost to a crash of our own worker does not.
   */
  harborFailures: number;
}

/**
 * A previous attempt's harbor that still runs on this host (its worker was SIGKILLed; detached groups
 * survive), identified by its pid file and the job-dir marker in its environment. Adopting it, instead of
 * stopping it and starting again, costs no repeated trial time; two harbor processes never share a job dir.
 */
export function liveOrphan(jobDir: string, pidFile: string): PidFile | null {
  const prev = readPidFile(pidFile);
  if (!prev || prev.host !== hostId() || !groupAlive(prev.pid)) return null;
  // The same process: its environment names this job (a spawned harbor), or its start time is the recorded one (a
  // harbor forked by the fork server, whose environment is the server's: harbor/forkserver.ts).
  const same = procHasEnv(prev.pid, JOB_ENV, jobDir) || (prev.procStart !== undefined && procStartTime(prev.pid) === prev.procStart);
  return same ? prev : null;
}

const orphanListeners = new Set<() => void>();

/**
 * Listens for harbors this process leaves running without an owner (for a next attempt to adopt): the worker's
 * orphan reaper looks at once, so one whose workflow was terminated (no attempt comes) stops now, not at its next
 * pass. Returns the unsubscribe.
 */
export function onOrphanLeft(listener: () => void): () => void {
  orphanListeners.add(listener);
  return () => orphanListeners.delete(listener);
}

/** A harbor was just left running without an owner (harbor/task-attempt.ts record). */
export function orphanLeft(): void {
  for (const listener of orphanListeners) listener();
}

/** The harbor a job's pid file names (the last one launched on the job), or null when there is none. */
export const readPidFile = (pidFile: string): PidFile | null => readJson<PidFile>(pidFile);

/** Whether a pid file is there (its harbor may have died or finished). */
export const hasPidFile = (pidFile: string): boolean => fs.existsSync(pidFile);

/** Removes the pid file of a harbor that is no more (or no longer ours). */
export const removePidFile = (pidFile: string): void => fs.rmSync(pidFile, { force: true });

export function writePidFile(pidFile: string, pid: number, startedAt: number): void {
  const procStart = procStartTime(pid) ?? undefined;
  // Atomic (a reader never sees half of it), not flushed: it matters while this host runs.
  writeFileDurable(pidFile, JSON.stringify({ pid, host: hostId(), startedAt, procStart } satisfies PidFile), { fsync: false });
}

/** Whether harbor finished the job (the job-level result.json has its finished_at). */
export const jobFinished = (jobDir: string): boolean =>
  Boolean(readJson<{ finished_at?: unknown }>(harborJobFiles.result(jobDir))?.finished_at);

/**
 * Whether harbor finished the job and every trial dir in it holds its result: nothing is left for a resume to run
 * (a trial dir without a result.json is one a resume would delete and run again).
 */
export function jobComplete(jobDir: string): boolean {
  if (!jobFinished(jobDir)) return false;
  return fs
    .readdirSync(jobDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .every((e) => fs.existsSync(harborJobFiles.trialResult(jobDir, e.name)));
}

/** Whether harbor started the job (it wrote the job's config.json). */
export const jobStarted = (jobDir: string): boolean => fs.existsSync(harborJobFiles.config(jobDir));

/** The Harbor version that ran the job (its lock.json), null when it does not say. */
export function jobHarborVersion(jobDir: string): string | null {
  const lock = JobLock.safeParse(readJson(harborJobFiles.lock(jobDir)));
  return lock.success ? (lock.data.harbor?.version ?? null) : null;
}

/** Moves a job dir Harbor refused to resume out of the way (kept for inspection, never deleted). */
export function setJobAside(jobDir: string, aside: string): void {
  fs.mkdirSync(path.dirname(aside), { recursive: true });
  fs.renameSync(jobDir, aside);
}

/** Makes a dir harbor needs (the jobs dir, its working directory) when it is missing; the dir. */
export function ensureDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Free bytes for an unprivileged writer on the filesystem of `dir` (null when it cannot be read). */
export function freeBytes(dir: string): number | null {
  try {
    const st = fs.statfsSync(dir);
    return st.bavail * st.bsize;
  } catch {
    return null;
  }
}

/** Records the failures counted so far, for a later attempt on this host. */
export function writeHarborFailures(file: string, count: number): void {
  writeFileDurable(file, String(count), { fsync: false });
}

/** Failures counted by earlier attempts: the last heartbeat's details, or this host's record of them. */
export function previousHarborFailures(details: unknown, file: string): number {
  const fromHeartbeat = (details as Partial<AttemptProgress> | undefined)?.harborFailures ?? 0;
  let fromFile = 0;
  try {
    fromFile = Number(fs.readFileSync(file, 'utf8')) || 0;
  } catch {
    /* none recorded here */
  }
  return Math.max(fromHeartbeat, fromFile);
}

/**
 * Before Harbor resumes the job: delete trials that are unreadable, failed without rewards (infrastructure
 * errors) or have a reward Harbor's error policy marks not valid (a model-provider failure, a spent budget), so
 * they run again; keep every trial whose reward counts. Trials without result.json are Harbor's to delete.
 */
export function pruneForResume(jobDir: string, usageFile?: string): string[] {
  const removed: string[] = [];
  const spent: Record<string, Usage> = {};
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(jobDir, { withFileTypes: true });
  } catch {
    return removed;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const file = harborJobFiles.trialResult(jobDir, e.name);
    if (!fs.existsSync(file)) continue;
    const r = readTrialFile(file, jobDir);
    const keep = 'trial' in r && hasValidReward(r.trial.result);
    if (!keep) {
      if ('trial' in r) spent[e.name] = usageOf(r.trial.result);
      if (usageFile) recordPrunedUsage(usageFile, spent); // before the trial is gone: its spend is never lost
      fs.rmSync(path.join(jobDir, e.name), { recursive: true, force: true });
      removed.push(e.name);
    }
  }
  return removed;
}

/**
 * What trials that ran and were then removed (pruned before a retry, or a job set aside) spent, by trial: kept
 * beside the job, so the task's row meters every trial that ran. Keyed by trial dir (within one job dir a
 * name is never reused once pruned: Harbor names the rerun anew).
 */
type PrunedUsage = Record<string, Usage>;

const readPrunedUsage = (file: string): PrunedUsage => readJson<PrunedUsage>(file) ?? {};

export function recordPrunedUsage(file: string, spent: PrunedUsage): void {
  if (Object.keys(spent).length === 0) return;
  writeFileDurable(file, JSON.stringify({ ...readPrunedUsage(file), ...spent }));
}

/** Every trial of a job dir about to be set aside (Harbor refused to resume it), by `<set-aside name>/<trial>`. */
export function usageOfJob(jobDir: string, prefix: string): PrunedUsage {
  const out: PrunedUsage = {};
  for (const t of loadTrials(jobDir).trials) out[`${prefix}/${path.basename(path.dirname(t.file))}`] = usageOf(t.result);
  return out;
}

/** The spend of every trial removed so far, summed. */
export function prunedUsage(file: string): Usage {
  return Object.values(readPrunedUsage(file)).reduce(addUsage, NO_USAGE);
}

export function countTrialResults(jobDir: string): number {
  try {
    return fs.readdirSync(jobDir).filter((d) => fs.existsSync(harborJobFiles.trialResult(jobDir, d))).length;
  } catch {
    return 0;
  }
}
