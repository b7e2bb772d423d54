/**
 * Whether a task's harbor has done its work. Harbor runs each trial's verifier, which writes the trial's reward to
 * `verifier/reward.txt` or `verifier/reward.json` in the trial dir; then it stops the trial's environment (on
 * Docker, about 10 s of `docker compose down`) and writes the trial's result.json only after that. Once every
 * trial of the job has a reward on disk, what is left is teardown: the task's lane can start the next task. The
 * task's row is still read from result.json when harbor exits.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { trialFiles } from '../model/harbor/paths';
import { readJson } from '../infra/json-file';

/** Whether this trial dir's verifier has written a reward harbor can read (a number, or a JSON object). */
export function hasReward(trialDir: string): boolean {
  try {
    const txt = trialFiles(trialDir).rewardText;
    if (fs.existsSync(txt)) {
      const text = fs.readFileSync(txt, 'utf8').trim();
      return text !== '' && Number.isFinite(Number(text));
    }
    const value = readJson(trialFiles(trialDir).reward);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false; // being written, or unreadable: not yet
  }
}

/** The trials of this job dir whose verifier has written a reward. */
export function rewardedTrials(jobDir: string): number {
  try {
    return fs.readdirSync(jobDir, { withFileTypes: true }).filter((e) => e.isDirectory() && hasReward(path.join(jobDir, e.name))).length;
  } catch {
    return 0;
  }
}

/**
 * Whether every one of the job's `trials` has passed its verifier with a reward. A trial without a reward (an
 * exception before or in the verifier) may be retried by harbor: its task keeps its lane until harbor exits.
 */
export function workDone(jobDir: string, trials: number): boolean {
  return rewardedTrials(jobDir) >= trials;
}

/** How often a running task's job dir is looked at for its rewards: a readdir and a stat or two per trial. */
export const WORK_DONE_POLL_MS = 100;

/**
 * Calls `onDone` once, within WORK_DONE_POLL_MS of the last of the job's `trials` having its reward on disk (rather
 * than at the activity's next heartbeat tick, up to a second later), so its lane goes to the next task at once.
 * Returns the function that stops looking.
 */
export function watchWorkDone(jobDir: string, trials: number, onDone: () => void): () => void {
  const timer = setInterval(() => {
    if (!workDone(jobDir, trials)) return;
    clearInterval(timer);
    onDone();
  }, WORK_DONE_POLL_MS);
  return () => clearInterval(timer);
}
