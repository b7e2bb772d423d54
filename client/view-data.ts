/**
 * What `vero view` and `vero report` show, read from Temporal visibility, workflow results and the files under
 * the home: the evaluations (with their candidates in commit order), one evaluation's tasks and trials, and two
 * candidates side by side. Finished results never change, so they are read once per process.
 */
import { belowRunJobsDir, harborLogOf, isHarborLog } from '../model/paths';
import { HARBOR_TRIAL_DIRS, HARBOR_TRIAL_FILES, trialFiles as trialDirFiles } from '../model/harbor/paths';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { loadTrials } from '../harbor/collate';
import { git } from '../infra/git';
import { homeRelative } from '../infra/home-file';
import { CandidateResult } from '../model/evaluation/candidate-result';
import { countedTaskScores, TaskResult } from '../model/evaluation/task-result';
import { comparePaired, PairedComparison, taskScoresOf } from '../model/race/paired-comparison';
import { scoreUncertainty } from '../model/race/uncertainty';
import { VeroStatus } from '../model/evaluation/search-attributes';
import { hasInvalidReward } from '../model/harbor/trial-ranking';
import { type EvalListing, listEvaluations } from './eval-listing';
import { withTasks } from './eval-results';
import { partialResults } from './partial-results';

/** A listed evaluation with its completed result's figures. */
export interface EvaluationRow extends Omit<EvalListing, 'startedAt' | 'finishedAt'> {
  ci95: [number, number] | null;
  nTasks: number | null;
  nScored: number | null;
  nErrors: number | null;
  startedAt: string;
  /** The candidate commit's committer time (seconds), when the agent repo is known and has it. */
  commitTime: number | null;
}

const results = new Map<string, CandidateResult>();

/** A completed evaluation's result (with its rows), read once. */
export async function completedResult(client: Client, evalId: string): Promise<CandidateResult> {
  if (!results.has(evalId)) results.set(evalId, withTasks((await client.workflow.getHandle(evalId).result()) as CandidateResult));
  return results.get(evalId)!;
}

async function commitTimes(agentRepo: string | undefined, shas: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!agentRepo || !shas.length || !fs.existsSync(agentRepo)) return out;
  for (const sha of shas) {
    // One at a time: a candidate missing from this clone must not hide the others.
    const line = await git(['show', '-s', '--format=%H %ct', sha], { cwd: agentRepo }).catch(() => '');
    const [h, t] = line.split(' ');
    if (h && t) out.set(h, Number(t));
  }
  return out;
}

/** The evaluations (those of one config digest, or all), newest first, with scores, intervals and commit times. */
export async function evaluationRows(client: Client, opts: { configDigest?: string; agentRepo?: string } = {}): Promise<EvaluationRow[]> {
  const listed = await listEvaluations(client, { configDigest: opts.configDigest });
  const rows = await Promise.all(
    listed.map(async (l): Promise<EvaluationRow> => {
      const r = l.workflowStatus === 'COMPLETED' ? await completedResult(client, l.evalId).catch(() => null) : null;
      const u = r ? (r.uncertainty ?? scoreUncertainty(countedTaskScores(r.tasks ?? []))) : null;
      return {
        evalId: l.evalId,
        candidate: r?.candidate ?? l.candidate,
        candidateRef: r?.candidateRef ?? l.candidateRef,
        status: l.status,
        workflowStatus: l.workflowStatus,
        score: r?.score ?? l.score,
        ci95: u?.ci95 ?? null,
        nTasks: r?.nTasks ?? null,
        nScored: r?.nScored ?? null,
        nErrors: r?.nErrors ?? null,
        costUsd: r?.usage?.costUsd ?? l.costUsd,
        startedAt: l.startedAt.toISOString(),
        commitTime: null,
      };
    }),
  );
  const times = await commitTimes(opts.agentRepo, [...new Set(rows.map((r) => r.candidate).filter((c): c is string => !!c))]);
  for (const r of rows) r.commitTime = r.candidate ? (times.get(r.candidate) ?? null) : null;
  return rows;
}

export interface ProgressPoint {
  label: string;
  evalId: string;
  score: number;
  ci95: [number, number] | null;
  bestSoFar: number;
}

/**
 * The optimization's progress: one point per candidate with a completed score, in commit order (commit time,
 * else evaluation start), its latest evaluation, the best so far, and the baseline (the first candidate).
 */
export function progressSeries(rows: EvaluationRow[]): { points: ProgressPoint[]; baseline: number | null; byCommitTime: boolean } {
  const scored = rows.filter((r) => r.score !== null && r.candidate && r.workflowStatus === 'COMPLETED' && r.status !== 'budget_exhausted');
  const latest = new Map<string, EvaluationRow>();
  for (const r of [...scored].sort((a, b) => a.startedAt.localeCompare(b.startedAt))) latest.set(r.candidate!, r);
  const byCommitTime = [...latest.values()].every((r) => r.commitTime !== null);
  const order = [...latest.values()].sort((a, b) =>
    byCommitTime ? a.commitTime! - b.commitTime! || a.startedAt.localeCompare(b.startedAt) : a.startedAt.localeCompare(b.startedAt),
  );
  let best = -Infinity;
  const points = order.map((r) => {
    best = Math.max(best, r.score!);
    return { label: labelOf(r), evalId: r.evalId, score: r.score!, ci95: r.ci95, bestSoFar: best };
  });
  return { points, baseline: points[0]?.score ?? null, byCommitTime };
}

/** `ref (sha8)`, or the short sha. */
export function labelOf(r: { candidate: string | null; candidateRef: string | null }): string {
  const sha = r.candidate ?? '';
  return r.candidateRef && r.candidateRef !== sha ? `${r.candidateRef} (${sha.slice(0, 8)})` : sha.slice(0, 12);
}

interface FileLink {
  label: string;
  /** Path relative to the home (for /file/…), or null when the file is outside it. */
  rel: string | null;
}

export interface TrialView {
  name: string;
  rewards: Record<string, number> | null;
  exception: string | null;
  startedAt: string | null;
  durationSec: number | null;
  /** Harbor's phase timings (environment setup, agent setup, agent, verifier), those the trial recorded. */
  phases: { phase: string; sec: number }[];
  costUsd: number | null;
  files: FileLink[];
  /** The trial dir relative to the home, for its page (transcript, verifier output), when the viewer serves it. */
  pageRel: string | null;
}

const PHASES = [
  ['environment_setup', 'environment'],
  ['agent_setup', 'agent setup'],
  ['agent_execution', 'agent'],
  ['verifier', 'verifier'],
] as const;

/** The phases a trial's result.json timed (`{started_at, finished_at}` each, or null). */
function phasesOf(result: Record<string, unknown>): TrialView['phases'] {
  return PHASES.flatMap(([key, phase]) => {
    const span = result[key] as { started_at?: string | null; finished_at?: string | null } | null | undefined;
    const sec = span?.started_at && span.finished_at ? (Date.parse(span.finished_at) - Date.parse(span.started_at)) / 1000 : NaN;
    return Number.isFinite(sec) ? [{ phase, sec }] : [];
  });
}

export interface TaskView {
  task: string;
  status: string;
  score: number | null;
  nTrials: number;
  runs: number | null;
  chosenTrial: string | null;
  note: string;
  harborLog: FileLink | null;
  trials: TrialView[];
}

export interface EvaluationDetail {
  evalId: string;
  workflowStatus: string;
  result: CandidateResult | null;
  /** Rows so far of an evaluation not completed. */
  partial: boolean;
  /** A running evaluation `vero pause` holds (its VeroStatus): no task starts until `vero resume`. */
  paused?: boolean;
  tasks: TaskView[];
}

const MAX_TRIAL_FILES = 12;
/** The agent's files a trial links: trajectories, text and logs. */
const AGENT_FILE = /trajectory|\.txt$|\.log$/;
const TRIAL_FILES: string[] = Object.values(HARBOR_TRIAL_FILES);

/**
 * Whether a path relative to the home is one the viewer links (and so may serve): a task's harbor log, or a
 * trial's result.json, trial.log, exception, agent trajectory/text/log or verifier output, in a run's jobs dir.
 * Nothing else under the home (the Temporal database, worktrees, repos, results) is ever served.
 */
export function isLinkedFile(rel: string): boolean {
  const parts = rel.split('/');
  const p = parts.some((s) => s === '' || s === '.' || s === '..') ? null : belowRunJobsDir(parts); // <job>/<trial>/…
  if (p === null) return false;
  if (p.length === 1) return isHarborLog(p[0]!);
  if (p.length === 3) return TRIAL_FILES.includes(p[2]!);
  return p.length === 4 && ((p[2] === HARBOR_TRIAL_DIRS.agent && AGENT_FILE.test(p[3]!)) || p[2] === HARBOR_TRIAL_DIRS.verifier);
}

/** Whether `rel` (relative to the home) names a trial dir of a run's job: `runs/<eval>/<run>/jobs/<job>/<trial>`. */
export function isTrialDir(rel: string): boolean {
  return belowRunJobsDir(rel.split('/'))?.length === 2 && isLinkedFile(`${rel}/${HARBOR_TRIAL_FILES.result}`);
}

/** The link of a file (or, with isTrialDir, of a trial's page): its path relative to the home when the viewer serves it, else null. */
function linkable(home: string, file: string, served = isLinkedFile): string | null {
  const rel = homeRelative(home, file);
  return rel !== null && served(rel) ? rel : null;
}

function trialFiles(home: string, trialDir: string): FileLink[] {
  const link = (label: string, file: string): FileLink[] => (fs.existsSync(file) ? [{ label, rel: linkable(home, file) }] : []);
  const files = trialDirFiles(trialDir);
  const listed = (dir: string) =>
    fs.existsSync(dir)
      ? fs
          .readdirSync(dir, { withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => e.name)
          .sort()
      : [];
  return [
    ...link(HARBOR_TRIAL_FILES.result, files.result),
    ...link(HARBOR_TRIAL_FILES.log, files.log),
    ...link('exception', files.exception),
    ...listed(files.agentDir)
      .filter((n) => AGENT_FILE.test(n))
      .flatMap((n) => link(`${HARBOR_TRIAL_DIRS.agent}/${n}`, path.join(files.agentDir, n))),
    ...listed(files.verifierDir).flatMap((n) => link(`${HARBOR_TRIAL_DIRS.verifier}/${n}`, path.join(files.verifierDir, n))),
  ].slice(0, MAX_TRIAL_FILES);
}

function trialsOf(home: string, jobDir: string): TrialView[] {
  if (!jobDir || !fs.existsSync(jobDir) || !fs.statSync(jobDir).isDirectory()) return [];
  return loadTrials(jobDir, { whole: true }) // the phase timings are beyond what scoring keeps
    .trials.map((t) => {
      const r = t.result;
      const start = r.started_at ? Date.parse(r.started_at) : NaN;
      const end = r.finished_at ? Date.parse(r.finished_at) : NaN;
      return {
        name: r.trial_name,
        rewards: r.verifier_result?.rewards ?? null,
        exception: r.exception_info
          ? `${r.exception_info.exception_type}: ${(r.exception_info.exception_message ?? '').split('\n')[0]}${
              hasInvalidReward(r) ? ' (reward not valid: not scored)' : ''
            }`
          : null,
        startedAt: r.started_at ?? null,
        durationSec: Number.isFinite(start) && Number.isFinite(end) ? (end - start) / 1000 : null,
        phases: phasesOf(r as Record<string, unknown>),
        costUsd: r.agent_result?.cost_usd ?? null,
        files: trialFiles(home, path.dirname(t.file)),
        pageRel: linkable(home, path.dirname(t.file), isTrialDir),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

function taskView(home: string, t: TaskResult, note: string): TaskView {
  const log = t.jobDir ? harborLogOf(t.jobDir) : '';
  return {
    task: t.task,
    status: t.status,
    score: t.score,
    nTrials: t.nTrials,
    runs: t.runs,
    chosenTrial: t.trial,
    note,
    harborLog: log && fs.existsSync(log) ? { label: 'harbor log', rel: linkable(home, log) } : null,
    trials: t.status === 'not_run' ? [] : trialsOf(home, t.jobDir),
  };
}

/** One evaluation: its result (or the rows so far, marked partial), each task with its trials and files. */
export async function evaluationDetail(
  client: Client,
  evalId: string,
  home: string,
  noteOf: (t: TaskResult) => string,
): Promise<EvaluationDetail> {
  const d = await client.workflow.getHandle(evalId).describe();
  if (d.status.name === 'COMPLETED') {
    const result = await completedResult(client, evalId);
    return {
      evalId,
      workflowStatus: d.status.name,
      result,
      partial: false,
      tasks: (result.tasks ?? []).map((t) => taskView(home, t, noteOf(t))),
    };
  }
  const p = await partialResults(client, evalId);
  const rows = p.tasks.map((t) => taskView(home, { ...t, runs: 0, timedOut: false, notes: [] } as TaskResult, t.error ?? ''));
  const paused = d.status.name === 'RUNNING' && d.typedSearchAttributes.get(VeroStatus) === 'paused';
  return { evalId, workflowStatus: d.status.name, result: null, partial: true, ...(paused ? { paused } : {}), tasks: rows };
}

export interface CompareDetail {
  a: CandidateResult;
  b: CandidateResult;
  comparison: PairedComparison;
}

/** Two completed evaluations side by side: B against A on the tasks both ran. */
export async function compareDetail(client: Client, a: string, b: string): Promise<CompareDetail> {
  const [ra, rb] = await Promise.all([completedResult(client, a), completedResult(client, b)]);
  return { a: ra, b: rb, comparison: comparePaired(taskScoresOf(ra), taskScoresOf(rb)) };
}
