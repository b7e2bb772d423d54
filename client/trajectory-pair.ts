/**
 * One task of two completed evaluations, side by side (`vero view`'s /pair page): each side's chosen trial (the
 * one its score counts; for a task that errored, its first trial), its result and verifier output, and the same
 * page of both trajectories aligned step by step (model/evaluation/trajectory-alignment.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { homeRelative } from '../infra/home-file';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { harborJobFiles } from '../model/harbor/paths';
import type { TaskResult } from '../model/evaluation/task-result';
import { alignSteps, Alignment } from '../model/evaluation/trajectory-alignment';
import { STEPS_PER_PAGE, trialDetail, TrialDetail } from './trial-detail';
import { completedResult, isTrialDir } from './view-data';

export interface PairSide {
  result: CandidateResult;
  row: TaskResult | null;
  /** The trial shown, or null with why not. */
  trial: TrialDetail | null;
  missing: string | null;
}

export interface TrajectoryPair {
  task: string;
  a: PairSide;
  b: PairSide;
  alignment: Alignment;
  pageNo: number;
  /** Whether either side has steps after this page. */
  more: boolean;
}

/** The chosen trial's dir of a task row (else its job's first trial dir), relative to the home, or why none. */
function chosenTrialRel(home: string, row: TaskResult): { rel: string } | { missing: string } {
  const inJob = (name: string) => homeRelative(home, path.join(row.jobDir, name));
  if (row.trial) {
    const rel = inJob(row.trial);
    if (rel && isTrialDir(rel)) return { rel };
  }
  let names: string[] = [];
  try {
    names = fs.readdirSync(row.jobDir).sort();
  } catch {
    return { missing: `its job dir ${row.jobDir} is not on this host` };
  }
  for (const name of names) {
    const rel = inJob(name);
    if (rel && isTrialDir(rel) && fs.existsSync(harborJobFiles.trialResult(row.jobDir, name))) return { rel };
  }
  return { missing: `no trial under ${row.jobDir}` };
}

async function sideOf(client: Client, home: string, evalId: string, task: string, pageNo: number): Promise<PairSide> {
  const result = await completedResult(client, evalId);
  const row = (result.tasks ?? []).find((t) => t.task === task) ?? null;
  if (!row) return { result, row, trial: null, missing: 'the evaluation has no such task' };
  if (row.status === 'not_run') return { result, row, trial: null, missing: 'not run' };
  const chosen = chosenTrialRel(home, row);
  if ('missing' in chosen) return { result, row, trial: null, missing: chosen.missing };
  return { result, row, trial: await trialDetail(home, chosen.rel, pageNo), missing: null };
}

const stepsOf = (s: PairSide) => (s.trial?.trajectory.ok ? s.trial.trajectory.steps : []);
const hasMore = (s: PairSide) => {
  const t = s.trial?.trajectory;
  return !!t?.ok && (t.totalSteps === null || t.offset + t.steps.length < t.totalSteps);
};

/** Task `task` of evaluations `a` and `b`, page `pageNo` of their trajectories aligned. */
export async function trajectoryPair(
  client: Client,
  home: string,
  a: string,
  b: string,
  task: string,
  pageNo: number,
): Promise<TrajectoryPair> {
  const [sa, sb] = await Promise.all([sideOf(client, home, a, task, pageNo), sideOf(client, home, b, task, pageNo)]);
  return {
    task,
    a: sa,
    b: sb,
    alignment: alignSteps(stepsOf(sa), stepsOf(sb), (pageNo - 1) * STEPS_PER_PAGE),
    pageNo,
    more: hasMore(sa) || hasMore(sb),
  };
}
