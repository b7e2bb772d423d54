/**
 * The rows of `vero query`'s views (model/query-views.ts): evaluations from Temporal (visibility, then each one's
 * result, or its rows so far while it is not completed), result files under the home that Temporal no longer
 * lists, and each task's trials from its Harbor job dir on this host.
 */
import * as fs from 'node:fs';
import type { Client } from '@temporalio/client';
import { loadTrials } from '../harbor/collate';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { parseHarborTime } from '../model/harbor/result';
import { QUERY_VIEWS, type QueryViewName, rowOf, type ViewRows } from '../model/query-views';
import { usageOf, type Usage } from '../model/harbor/trial-ranking';
import { type EvalListing, listEvaluations } from './eval-listing';
import { homeResults, withTasks } from './eval-results';
import { partialResults, type PartialResults } from './partial-results';

export interface QuerySources {
  /** Temporal (null: result files only). */
  client: Client | null;
  /** A vero home whose result files are read too (those Temporal does not list). */
  home?: string | null;
  /** Views to fill (the others stay empty): reading every trial is the costly part. Default: all. */
  views?: readonly QueryViewName[];
}

/** The views a statement names (a word match: it only spares reading what the statement cannot use). */
export function viewsNamedIn(sql: string): QueryViewName[] {
  return QUERY_VIEWS.map((v) => v.name).filter((name) => new RegExp(`\\b${name}\\b`, 'i').test(sql));
}

interface TaskLike {
  task: string;
  status: string;
  score: number | null;
  trial: string | null;
  nTrials: number;
  runs?: number;
  error: string | null;
  exceptions: string[];
  usage?: Usage;
  jobDir: string;
}

const usageCols = (u: Usage | undefined) => ({
  cost_usd: u?.costUsd,
  input_tokens: u?.inputTokens,
  output_tokens: u?.outputTokens,
  cache_tokens: u?.cacheTokens,
});

class ViewRowsBuilder {
  readonly rows = Object.fromEntries(QUERY_VIEWS.map((v) => [v.name, []])) as unknown as ViewRows;
  constructor(private readonly wanted: ReadonlySet<QueryViewName>) {}

  add(view: QueryViewName, values: Record<string, unknown>): void {
    if (this.wanted.has(view)) this.rows[view].push(rowOf(view, values));
  }

  get wantsTrials(): boolean {
    return this.wanted.has('trials') || this.wanted.has('rewards') || this.wanted.has('errors');
  }

  /** A completed evaluation's result (from Temporal or its file). */
  result(r: CandidateResult, listing: EvalListing | null, source: 'temporal' | 'file'): void {
    this.add('evaluations', {
      eval_id: r.evalId,
      candidate: r.candidate,
      candidate_ref: r.candidateRef,
      status: r.status,
      workflow_status: listing?.workflowStatus ?? null,
      partial: false,
      score: r.score,
      score_of_scored: r.scoreOfScored,
      n_tasks: r.nTasks,
      n_scored: r.nScored,
      n_errors: r.nErrors,
      n_not_run: r.spend?.nNotRun ?? 0,
      error_rate: r.errorRate,
      cost_usd: r.usage?.costUsd ?? listing?.costUsd,
      config_digest: r.configDigest,
      started_at: r.startedAt,
      finished_at: r.finishedAt,
      result_file: r.resultFile,
      source,
    });
    this.spend(r.evalId, r.usage, r.spend);
    for (const t of r.tasks ?? []) this.task(r.evalId, t);
  }

  /** An evaluation not completed: what visibility says, and its rows so far. */
  unfinished(l: EvalListing, tasks: TaskLike[], nTasks: number | null): void {
    this.add('evaluations', {
      eval_id: l.evalId,
      candidate: l.candidate,
      status: l.workflowStatus.toLowerCase(),
      workflow_status: l.workflowStatus,
      partial: true,
      score: l.score,
      n_tasks: nTasks,
      n_scored: tasks.filter((t) => t.status === 'scored').length,
      n_errors: tasks.filter((t) => t.status === 'error').length,
      n_not_run: tasks.filter((t) => t.status === 'not_run').length,
      cost_usd: l.costUsd,
      started_at: l.startedAt,
      finished_at: l.finishedAt,
      source: 'temporal',
    });
    this.spend(l.evalId, { costUsd: l.costUsd, inputTokens: null, outputTokens: null, cacheTokens: null }, undefined);
    for (const t of tasks) this.task(l.evalId, { ...t, runs: undefined });
  }

  private spend(evalId: string, usage: Usage | undefined, s: CandidateResult['spend']): void {
    this.add('spend', {
      eval_id: evalId,
      ...usageCols(usage),
      max_cost_usd: s?.maxCostUsd,
      max_tokens: s?.maxTokens,
      spend_pool: s?.pool,
      cap_reached: s?.reached,
    });
  }

  private task(evalId: string, t: TaskLike): void {
    this.add('tasks', {
      eval_id: evalId,
      task: t.task,
      status: t.status,
      score: t.score,
      chosen_trial: t.trial,
      n_trials: t.nTrials,
      runs: t.runs,
      error: t.error,
      exceptions: t.exceptions,
      ...usageCols(t.usage),
      job_dir: t.jobDir,
    });
    if (t.error) this.add('errors', { eval_id: evalId, task: t.task, level: 'task', message: t.error });
    if (this.wantsTrials && t.status !== 'not_run') this.trials(evalId, t);
  }

  /** The trials of a task's job dir on this host (none when the dir is on another host, or gone). */
  private trials(evalId: string, t: TaskLike): void {
    if (!t.jobDir || !fs.existsSync(t.jobDir)) return;
    for (const { result, file } of loadTrials(t.jobDir, { whole: true }).trials) {
      const started = parseHarborTime(result.started_at);
      const finished = parseHarborTime(result.finished_at);
      const e = result.exception_info;
      const valid = (result as { reward_valid?: unknown }).reward_valid;
      const ids = { eval_id: evalId, task: t.task, trial: result.trial_name };
      this.add('trials', {
        ...ids,
        chosen: result.trial_name === t.trial,
        exception_type: e?.exception_type,
        reward_valid: typeof valid === 'boolean' ? valid : null,
        started_at: result.started_at,
        finished_at: result.finished_at,
        duration_sec: started !== null && finished !== null ? (finished - started) / 1000 : null,
        ...usageCols(usageOf(result)),
        result_file: file,
      });
      for (const [key, value] of Object.entries(result.verifier_result?.rewards ?? {})) this.add('rewards', { ...ids, key, value });
      if (e) this.add('errors', { ...ids, level: 'trial', type: e.exception_type, message: e.exception_message ?? null });
    }
  }
}

/** Result files under the home, by evaluation id (those without one are skipped: they are not results). */
function resultFiles(home: string): Map<string, CandidateResult> {
  const results = homeResults(home).filter((r) => typeof r.evalId === 'string' && typeof r.candidate === 'string');
  return new Map(results.map((r) => [r.evalId, r]));
}

/** Evaluations read from Temporal at once: each is a round trip or two, and a server may hold thousands. */
const READS_AT_ONCE = 16;

/** `read` of every item, at most `atOnce` at a time, answers in the items' order; the first failure stops every lane. */
async function readAll<T, R>(items: T[], atOnce: number, read: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    try {
      for (let i = next++; i < items.length && !failed; i = next++) out[i] = await read(items[i]!);
    } catch (e) {
      failed = true;
      throw e;
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, lane));
  return out;
}

/** A listed evaluation's result when it completed, else its rows so far (null when they cannot be read). */
async function answerOf(client: Client, l: EvalListing): Promise<{ result: CandidateResult } | { partial: PartialResults | null }> {
  if (l.workflowStatus === 'COMPLETED')
    return { result: withTasks((await client.workflow.getHandle(l.evalId).result()) as CandidateResult) };
  return { partial: await partialResults(client, l.evalId).catch(() => null) };
}

/** Every view's rows, from the sources. */
export async function loadViewRows(sources: QuerySources): Promise<ViewRows> {
  const b = new ViewRowsBuilder(new Set(sources.views ?? QUERY_VIEWS.map((v) => v.name)));
  const client = sources.client;
  const listed = client ? await listEvaluations(client) : [];
  const answers = await readAll(listed, READS_AT_ONCE, (l) => answerOf(client!, l));
  for (const [i, l] of listed.entries()) {
    const a = answers[i]!;
    if ('result' in a) b.result(a.result, l, 'temporal');
    else b.unfinished(l, a.partial?.tasks ?? [], a.partial?.nTasks ?? null);
  }
  const seen = new Set(listed.map((l) => l.evalId));
  if (sources.home) for (const [id, r] of resultFiles(sources.home)) if (!seen.has(id)) b.result(r, null, 'file');
  return b.rows;
}
