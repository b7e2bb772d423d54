/**
 * The race client: builds a race's input from a vero.yaml and candidate refs (each validated as start-eval
 * validates it, so a candidate's config digest is its full evaluation's), finds rows already scored for each
 * candidate under that digest (never paid again), starts or attaches to the race, and reads its state.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { EvalConfig } from '../model/evaluation/config';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import type { EvalInput } from '../model/evaluation/input';
import { ConfigError } from '../model/errors';
import { taskWeights } from '../model/race/sampling';
import { RaceInput, type RaceResult, type RaceState } from '../model/race/types';
import { raceCandidates, raceQuery } from '../workflows';
import { describeIfAny } from './connection';
import { queryWithinBound } from './worker-wait';
import { prepareEvalInput } from './eval-input';
import { homeResults } from './eval-results';

export interface RaceOptions {
  confidence: number;
  margin: number;
  seed: string;
  batchSize?: number;
  onEliminated: 'stop' | 'finish';
  maxCostUsd?: number;
  /** Draw the tasks by how much earlier evaluations under the same config digest disagreed on them. */
  historyWeights?: boolean;
}

/** The home's result files under this digest, with their rows (unreadable ones skipped: nothing to learn from them). */
function resultsUnder(home: string, digest: string): CandidateResult[] {
  return homeResults(home).filter((r) => r.configDigest === digest && Array.isArray(r.tasks));
}

/**
 * Per task (the config's order): one score per earlier-evaluated commit under this digest (its first scored row),
 * and how many commits that is. What `taskWeights` turns into the race's sampling weights.
 */
export function earlierScores(home: string, digest: string, tasks: readonly string[]): { scores: number[][]; commits: number } {
  const byCommit = new Map<string, Map<string, number>>();
  for (const r of resultsUnder(home, digest)) {
    const rows = byCommit.get(r.candidate) ?? new Map<string, number>();
    for (const t of r.tasks ?? []) if (t.status === 'scored' && !rows.has(t.task)) rows.set(t.task, t.score ?? 0);
    byCommit.set(r.candidate, rows);
  }
  const commits = [...byCommit.values()].filter((rows) => rows.size > 0);
  return { scores: tasks.map((task) => commits.flatMap((rows) => (rows.has(task) ? [rows.get(task)!] : []))), commits: commits.length };
}

/** The race's sampling weights from the home's earlier evaluations, when asked for and informative. */
function historyFields(home: string, digest: string, tasks: readonly string[]): Partial<RaceInput> {
  const { scores, commits } = earlierScores(home, digest, tasks);
  const weights = taskWeights(scores);
  return weights ? { taskWeights: weights, earlierEvaluations: commits } : {};
}

/** Rows stored for this commit under this digest: its full evaluation's file and earlier races' entries. */
function storedRows(home: string, commit: string, digest: string): RaceInput['stored'][number] {
  const byTask = new Map<string, RaceInput['stored'][number][number]>();
  for (const r of resultsUnder(home, digest).filter((x) => x.candidate === commit)) {
    for (const t of r.tasks!) {
      if (t.status !== 'scored' || byTask.has(t.task)) continue;
      const { notes: _notes, ...row } = t;
      byTask.set(t.task, { ...row, status: 'scored' });
    }
  }
  return [...byTask.values()];
}

/** The race's input; every problem with the candidates is reported at once. */
export async function prepareRaceInput(cfg: EvalConfig, refs: string[], o: RaceOptions): Promise<RaceInput> {
  if (refs.length < 2) throw new ConfigError(`candidates: a race needs at least 2, got ${refs.length}`);
  const inputs: EvalInput[] = [];
  const problems: string[] = [];
  for (const ref of refs) {
    try {
      inputs.push(await prepareEvalInput(cfg, ref));
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  if (problems.length) throw new ConfigError(problems.join('\n'));
  const seen = new Map<string, string>();
  for (const [i, e] of inputs.entries()) {
    const prev = seen.get(e.candidate);
    if (prev !== undefined)
      throw new ConfigError(`candidates: "${refs[i]}" and "${prev}" are the same commit (${e.candidate.slice(0, 12)})`);
    seen.set(e.candidate, refs[i]!);
  }
  const first = inputs[0]!;
  const history = o.historyWeights ? historyFields(first.home, first.configDigest, first.tasks) : {};
  const settings = [o.confidence, o.margin, o.seed, o.batchSize ?? null, o.onEliminated, o.maxCostUsd ?? null];
  if (history.taskWeights) settings.push(JSON.stringify(history.taskWeights));
  const key = JSON.stringify([first.configDigest, inputs.map((e) => e.candidate), settings]);
  const raceId = `race-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
  return RaceInput.parse({
    raceId,
    agentRepo: first.agentRepo,
    home: first.home,
    tasks: first.tasks,
    seed: o.seed,
    configDigest: first.configDigest,
    settings: first.settings,
    candidates: inputs.map((e, i) => ({
      evalId: `${raceId}-${e.candidate.slice(0, 12)}`,
      fullEvalId: e.evalId,
      candidate: e.candidate,
      candidateRef: refs[i]!,
    })),
    confidence: o.confidence,
    margin: o.margin,
    ...(o.batchSize !== undefined ? { batchSize: o.batchSize } : {}),
    onEliminated: o.onEliminated,
    ...(o.maxCostUsd !== undefined ? { maxCostUsd: o.maxCostUsd } : {}),
    stored: inputs.map((e) => storedRows(first.home, e.candidate, e.configDigest)),
    ...history,
  });
}

/** Starts the race, or attaches to the running (or completed) one with the same id. */
export async function startRace(client: Client, input: RaceInput, taskQueue: string): Promise<'started' | 'attached'> {
  const prev = await client.workflow
    .getHandle(input.raceId)
    .describe()
    .catch(() => null);
  if (prev && (prev.status.name === 'RUNNING' || prev.status.name === 'COMPLETED')) return 'attached';
  await client.workflow.start(raceCandidates, {
    workflowId: input.raceId,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    memo: { home: input.home },
    staticSummary: `race of ${input.candidates.map((c) => c.candidateRef).join(', ')} on ${input.tasks.length} task(s)`.slice(0, 200),
  });
  return 'started';
}

/** A race id as `vero race` makes it (race-<16 hex>): anything else names no race. */
export const RACE_ID = /^race-[0-9a-f]{16}$/;

/** The race's state now: its query while it runs, its result once done (one that failed, was terminated or timed out: the
 * WorkflowFailedError with its cause). An id that is no race: a ConfigError. */
export async function raceState(client: Client, raceId: string): Promise<RaceState | RaceResult> {
  const handle = client.workflow.getHandle(raceId);
  const d = await describeIfAny(client, raceId);
  if (!d) throw new ConfigError(`${raceId}: no such race on this server and namespace (not found)`);
  if (d.type !== 'raceCandidates') throw new ConfigError(`${raceId}: a ${d.type} workflow, not a race (not found)`);
  // Ended: its result, or the WorkflowFailedError carrying why it failed, was terminated or timed out.
  if (d.status.name !== 'RUNNING') return (await handle.result()) as RaceResult;
  return queryWithinBound(client, handle, raceQuery, `race ${raceId}`, d.taskQueue);
}

export interface RaceListing {
  raceId: string;
  status: string;
  startedAt: string;
}

/** The most races of the namespace `listRaces` looks through (the newest; a home's older races are not listed). */
export const RACES_SCANNED = 1000;

/** The races whose files are under `home` (newest first, at most `limit`) among the namespace's newest `scan`. */
export async function listRaces(client: Client, home: string, limit = 200, scan = RACES_SCANNED): Promise<RaceListing[]> {
  const out: RaceListing[] = [];
  let seen = 0;
  for await (const w of client.workflow.list({ query: `WorkflowType = 'raceCandidates'`, pageSize: 100 })) {
    if (out.length >= limit || seen++ >= scan) break;
    if (!RACE_ID.test(w.workflowId) || (typeof w.memo?.home === 'string' && w.memo.home !== home)) continue;
    if (out.some((r) => r.raceId === w.workflowId)) continue; // an id raced again: its newest run is listed
    out.push({ raceId: w.workflowId, status: w.status.name, startedAt: w.startTime.toISOString() });
  }
  return out;
}

export async function raceResult(client: Client, raceId: string): Promise<RaceResult> {
  return (await client.workflow.getHandle(raceId).result()) as RaceResult;
}
