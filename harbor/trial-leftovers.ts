/**
 * What a harbor that died before its teardown (killed with its worker, say) left in Docker: the compose projects of
 * its unfinished trials (infra/docker.ts), removed before its job resumes, by whoever can tell that harbor is dead.
 *
 * - An attempt on the harbor's own host: the job's pid file names this host, and no live harbor is that process
 *   (harbor/orphans.ts liveOrphan, the check adoption makes). It removes them before it launches harbor again.
 * - That host's orphan reaper (worker/orphan-reaper.ts): a harbor of its record that is gone, or one it stopped.
 * - An attempt on another host cannot tell whether that harbor still runs there: it never removes them. It hands
 *   the names of the unfinished trials over, in a file beside the pid file, to the harbor's host, whose reaper
 *   removes them once that harbor is gone (Harbor's resume deletes those trial dirs, and with them the names).
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import { writeJsonDurable } from '../infra/atomic-file';
import { dockerAnswers, removeTrialLeftovers, type RemovedLeftovers } from '../infra/docker';
import { hostId } from '../infra/host-groups';
import { harborJobFiles } from '../model/harbor/paths';
import { liveOrphan, readPidFile } from './orphans';
import { readJson } from '../infra/json-file';
import { usesLocalDocker } from '../model/harbor/config';
import type { TaskAttempt } from './task-attempt';

/** A harbor process: its host and pid (a job's pid file names the last one launched on the job). */
export interface HarborProcess {
  host: string;
  pid: number;
}

const keyOf = (h: HarborProcess): string => `${h.host}/${h.pid}`;

/**
 * A Harbor trial's name: its task's (at most 32 characters) and 7 random ones (Harbor's `generate_trial_name`). Only
 * such names are taken: each names one trial's compose projects (`<trial>__…`), never a wider set.
 */
const TRIAL_NAME = /^[^/\\]{1,32}__[A-Za-z0-9]{7}$/;

/** Handed-over trials by harbor (`host/pid`). */
const Handover = z.record(z.string(), z.array(z.string().regex(TRIAL_NAME)));
type Handover = z.infer<typeof Handover>;

/** The file, beside a job's pid file, naming the unfinished trials of harbors that ran on another host. */
export const handoverFile = (pidFile: string): string => `${pidFile.replace(/\.pid$/, '')}.dead-harbor-trials.json`;

function readHandover(pidFile: string): Handover {
  const parsed = Handover.safeParse(readJson(handoverFile(pidFile)));
  return parsed.success ? parsed.data : {};
}

function writeHandover(pidFile: string, all: Handover): void {
  if (Object.keys(all).length) writeJsonDurable(handoverFile(pidFile), all, { fsync: false });
  else fs.rmSync(handoverFile(pidFile), { force: true });
}

/** The trial dirs of a job that hold no result.json: started and not finished (Harbor writes it after teardown). */
function unfinishedTrials(jobDir: string): string[] {
  try {
    return fs
      .readdirSync(jobDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && TRIAL_NAME.test(e.name) && !fs.existsSync(harborJobFiles.trialResult(jobDir, e.name)))
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/**
 * The trials a dead harbor may have left in Docker: the job's unfinished trials while its pid file still names that
 * harbor (listed first: a harbor launched after the look writes its pid file before it makes a trial, so none of
 * its trials is listed), and those an attempt on another host handed over when it resumed the job.
 */
function trialsOfDeadHarbor(jobDir: string, pidFile: string, dead: HarborProcess): string[] {
  const unfinished = unfinishedTrials(jobDir);
  const last = readPidFile(pidFile);
  const stillLast = last !== null && keyOf(last) === keyOf(dead);
  return [...new Set([...(stillLast ? unfinished : []), ...(readHandover(pidFile)[keyOf(dead)] ?? [])])];
}

/**
 * Removes what a dead harbor's trials left in Docker (with the harbor's Docker settings `env`). Null when Docker did
 * not answer before and after the removal (a listing of an engine that does not answer looks empty): nothing is
 * known removed, and the handed-over names are kept for the next try.
 */
export async function removeDeadHarborLeftovers(
  jobDir: string,
  pidFile: string,
  dead: HarborProcess,
  env: Record<string, string>,
): Promise<RemovedLeftovers | null> {
  const trials = trialsOfDeadHarbor(jobDir, pidFile, dead);
  if (trials.length && !(await dockerAnswers(env))) return null;
  const removed = await removeTrialLeftovers(trials, env);
  if (trials.length && !(await dockerAnswers(env))) return null;
  const all = readHandover(pidFile);
  if (keyOf(dead) in all) {
    delete all[keyOf(dead)];
    writeHandover(pidFile, all);
  }
  return removed;
}

/** Hands a harbor's unfinished trials over to its host's reaper. */
function handOver(pidFile: string, other: HarborProcess, trials: string[]): void {
  if (trials.length === 0) return;
  const all = readHandover(pidFile);
  all[keyOf(other)] = [...new Set([...(all[keyOf(other)] ?? []), ...trials])];
  writeHandover(pidFile, all);
}

/**
 * Before an attempt launches harbor on a job whose pid file outlived its harbor's worker (nothing adopted it): that
 * harbor's leftovers removed when it ran on this host (it is dead: a live one would have been adopted), or handed
 * over to its host when it ran on another.
 */
export async function settleDeadPredecessor(t: TaskAttempt): Promise<void> {
  if (!usesLocalDocker(t.s.harbor.environment)) return;
  const prev = readPidFile(t.pidFile);
  if (!prev) return;
  if (prev.host !== hostId()) {
    const trials = unfinishedTrials(t.jobDir);
    handOver(t.pidFile, prev, trials);
    if (trials.length)
      t.ctx.log.info("the previous attempt's harbor ran on another host: its unfinished trials are left to that host", {
        task: t.task,
        host: prev.host,
        trials,
      });
    return;
  }
  if (liveOrphan(t.jobDir, t.pidFile)) return; // (adopted before any launch: not reached)
  const env = { ...(process.env as Record<string, string>), ...t.env };
  const removed = await removeDeadHarborLeftovers(t.jobDir, t.pidFile, prev, env);
  if (!removed)
    t.ctx.log.warn("Docker did not answer: the previous attempt's dead harbor's leftovers were not removed", {
      task: t.task,
      pid: prev.pid,
    });
  else if (Object.values(removed).some((l) => l.length))
    t.ctx.log.warn("removed the Docker leftovers of the previous attempt's dead harbor", { task: t.task, pid: prev.pid, ...removed });
}
