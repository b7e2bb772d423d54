/**
 * auto_best's trusted re-scoring as a race (build.yaml `auto_best_race`, Mode B): instead of scoring each
 * shortlisted commit on the whole selection split, the shortlist races on it (`raceCandidates`, docs/race.md) and a
 * candidate stops costing trials once it is worse than the leader at the stated confidence. The same guarantee as
 * every trusted evaluation holds: a task the race could not score for infrastructure reasons, or an attempt starved
 * of model calls, makes finalize unscorable (503), never a low score.
 */
import * as fs from 'node:fs';
import { withTasks } from '../client/eval-results';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import type { RaceResult } from '../model/race/types';
import type { ServeConfig } from '../model/compiled-task/serve-config';
import { type Engine, rowAttempts } from './engine';
import { unscorable } from './errors';

/** One shortlisted commit after the race: its mean over the tasks it ran, with its confidence sequence. */
export interface RacedEntry {
  commit: string;
  recorded: number;
  rescored: number;
  tasks_run: number;
  interval: [number, number];
  /** After how many shared tasks it was eliminated (absent: it raced to the end). */
  eliminated_at?: number;
}

/** What finalize's record says of the race: how it ended, how sure, and what it cost against scoring everything. */
export interface RaceSummary {
  race_id: string;
  stop_reason: string | null;
  verdict: string | null;
  /** The chosen commit's mean on the selection split, with its confidence sequence at the race's confidence. */
  winner_interval: [number, number];
  trial_runs: number;
  /** Trials that scoring every shortlisted commit on every task would have run. */
  full_trial_runs: number;
}

/** Every task row of the race's entries: an error or a starved attempt is the infrastructure's, never a score. */
function checkScored(r: RaceResult, split: string): void {
  for (const e of r.results) {
    const res = withTasks(JSON.parse(fs.readFileSync(e.resultFile, 'utf8')) as CandidateResult);
    const who = `the trusted race's evaluation of ${e.candidateRef.slice(0, 12)} on "${split}"`;
    const error = (res.tasks ?? []).find((t) => t.status === 'error');
    if (error)
      throw unscorable(`${who} has ${res.nErrors} task(s) unscored for infrastructure reasons (first: ${error.task}: ${error.error})`);
    const starved = (res.tasks ?? []).filter((t) => rowAttempts(t).starved > 0);
    if (starved.length)
      throw unscorable(`${who} has ${starved.length} task(s) with starved attempts (0 input and 0 output tokens): not a score`);
  }
}

/** Races the shortlist on the selection split: the winner, each entry's mean and interval, and the race's record. */
export async function raceShortlist(
  cfg: ServeConfig,
  engine: Engine,
  shortlist: [string, { score: number }][],
): Promise<{ winner: string; entries: RacedEntry[]; race: RaceSummary }> {
  const split = cfg.selection_split;
  let r: RaceResult;
  try {
    r = await engine.race(
      shortlist.map(([c]) => c),
      split,
      cfg.auto_best_race!,
    );
  } catch (e) {
    throw unscorable(`the trusted race of ${shortlist.length} candidates on "${split}" failed: ${(e as Error).message}`);
  }
  checkScored(r, split);
  const byCommit = new Map(r.candidates.map((c) => [c.candidate, c]));
  const entries = shortlist.map(([commit, rec]): RacedEntry => {
    const c = byCommit.get(commit)!;
    return {
      commit,
      recorded: rec.score,
      rescored: c.mean,
      tasks_run: c.tasksRun,
      interval: c.meanCs,
      ...(c.eliminatedAt !== null ? { eliminated_at: c.eliminatedAt } : {}),
    };
  });
  const winner = r.winner ?? entries[0]!.commit;
  return {
    winner,
    entries,
    race: {
      race_id: r.raceId,
      stop_reason: r.stopReason,
      verdict: r.verdict,
      winner_interval: byCommit.get(winner)!.meanCs,
      trial_runs: r.spent.trialRuns,
      full_trial_runs: r.fullEvaluation.trialRuns,
    },
  };
}
