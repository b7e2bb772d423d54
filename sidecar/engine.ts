/**
 * Runs evaluations for the sidecar, both as durable workflows: Mode B as the candidate-evaluation workflow,
 * Mode A as `evaluateSamples` (inference, untrusted, in the candidate's worktree; then the trusted scorer).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { evalInputFor, settingsFrom } from '../client/eval-input';
import { getProgress } from '../client/running-eval';
import { startOrAttach } from '../client/eval-start';
import { raceResult, startRace } from '../client/race-client';
import { RaceInput, type RaceResult } from '../model/race/types';
import { withTasks } from '../client/eval-results';
import { evalConfigOf } from '../infra/eval-config-file';
import { CandidateResult } from '../model/evaluation/candidate-result';
import { EvalSettings } from '../model/evaluation/input';
import { isCandidateFailure, type SampleScore } from '../model/compiled-task/sample-score';
import { constraintViolations } from '../model/compiled-task/objective';
import { HarborSection } from '../model/harbor/config';
import type { FeedbackSpec, ServeConfig, SplitAccess } from '../model/compiled-task/serve-config';
import { caseFeedback, transcriptSecrets } from './case-feedback';
import { badRequest, notEvaluable } from './errors';
import { evaluateSamples } from '../workflows';
import { FINALIZATION_TOKEN_ID, type Gateway } from './gateway/gateway';
import type { ScopeUsage } from '../model/gateway/policy';
import type { ModeAInput } from '../model/evaluation/activity-payloads';
import { InfrastructureError } from '../model/errors';
import { evalSourceOf } from '../harbor/dataset-ref';
import { attemptHealth, type AttemptHealth, starvedAttempts, type TaskAttempts } from '../model/evaluation/attempt-health';

export interface SampleRequest {
  sample_ids?: number[];
  num_samples?: number;
}

export interface EvalOutcome {
  commit: string;
  split: string;
  samples: SampleScore[];
  meanScore: number;
  nErrors: number;
  /**
   * Errors that say nothing of the candidate: in Mode B every error row (no trial was rewarded after every
   * attempt); in Mode A a row the trusted scorer did not score (a row the inference gave no output for is the
   * candidate's failure, scored 0).
   */
  nInfraErrors: number;
  fullSplit: boolean;
  /**
   * Mode B: trials run, trials that ended without a reward that counts (a mean diluted by an outage shows here),
   * and of those, the ones with a reward Harbor's error policy marks not valid.
   */
  trials?: { n_trials: number; n_dead_trials: number; n_invalid_trials: number };
  /** What the evaluation's model calls cost through the gateway (when the task has one). */
  modelUsage?: ScopeUsage;
  /** Starved, dead and unmeasured attempts, with a warning when they deflate the mean. */
  health: AttemptHealth;
  /**
   * Why the evaluation is not a score of the candidate: its model budget ran out (the gateway refused a call), so
   * a low mean would be the budget's, not the candidate's.
   */
  invalid?: string;
  /** What made it invalid: refused model calls, or (Mode B) errors at or above scoring.error_rate_threshold. */
  invalidBy?: 'gateway' | 'error_rate';
  /** The report's metrics (Mode A's harness), else `score`, `error_rate` and `score_stddev` (vero's names). */
  metrics?: Record<string, number>;
  /** The objective's constraints this evaluation breaks (model/compiled-task/objective.ts): never chosen, never a reward. */
  violations?: string[];
}

/**
 * An evaluation's metrics: a harness's report's (one run scores every case), else vero's aggregate metrics of its
 * cases (a case without a score counts as `failureValue`).
 */
export function outcomeMetrics(samples: SampleScore[], failureValue: number): Record<string, number> {
  const reported = samples.find((s) => s.metrics)?.metrics;
  if (reported) return reported;
  const scores = samples.map((s) => s.score ?? failureValue);
  const mean = scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : failureValue;
  const variance = scores.length ? scores.reduce((a, b) => a + (b - mean) ** 2, 0) / scores.length : 0;
  return {
    score: mean,
    error_rate: samples.length ? samples.filter((s) => s.score === null).length / samples.length : 0,
    score_stddev: Math.sqrt(variance),
  };
}

/**
 * One sample's attempts for attempt health. Mode B: its trials; starved from Harbor's token counts, or, when Harbor
 * reported none, from the gateway's count of the task's calls (0 tokens with refused calls). Mode A: one attempt,
 * dead when the trusted scorer did not score it.
 */
export function sampleAttempts(x: SampleScore, mode: 'A' | 'B'): TaskAttempts {
  if (mode === 'A')
    return {
      trials: 1,
      dead: x.score === null && !isCandidateFailure(x.error) ? 1 : 0,
      inputTokens: null,
      outputTokens: null,
    };
  const trials = x.n_trials ?? 0;
  const dead = x.n_dead_trials ?? 0;
  if (x.n_starved_trials) return { trials, dead, inputTokens: 0, outputTokens: 0 };
  const u = x.model_usage;
  const refusedAll = u && u.refused_budget > 0 && u.input_tokens === 0 && u.output_tokens === 0;
  return { trials, dead, inputTokens: refusedAll ? 0 : null, outputTokens: refusedAll ? 0 : null };
}

/** A short digest of a JSON value: the same request maps to the same token and workflow. */
const shortDigest = (x: unknown): string => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 16);

/** A task row's dead trials (no reward that counts) and, of its attempts, the starved ones (no tokens either way). */
export function rowAttempts(t: NonNullable<CandidateResult['tasks']>[number]): { dead: number; starved: number } {
  const dead = t.nTrials - (t.trialRewards?.length ?? t.nTrials);
  const usage = { inputTokens: t.usage?.inputTokens ?? null, outputTokens: t.usage?.outputTokens ?? null };
  return { dead, starved: starvedAttempts({ trials: t.nTrials, dead, ...usage }) };
}

/** What a trusted evaluation's workflow id carries for its run: nothing for the first, `-run<n>` after. */
const runSuffix = (run: number | undefined) => (run && run > 1 ? `-run${run}` : '');

/** Agent-requested evaluations are metered on the evaluation scope; the verifier's on its own. */
export type EvaluationKind = 'agent' | 'trusted';

/** How a target's trusted evaluation scores (Mode B), where it differs from `scoring`: from targets[]. */
export interface TargetScoring {
  nAttempts?: number;
  /** A target's own model (`-m`) for its trusted scoring. */
  model?: string;
  metric?: string;
  aggregate?: 'best' | 'mean';
}

/** The settings of a Mode B evaluation: through the CLI's schema and builder, with the sidecar's isolation. */
export function modeBSettings(cfg: ServeConfig, envFile: string | undefined, kind: EvaluationKind, t: TargetScoring = {}): EvalSettings {
  const b = cfg.mode_b!;
  const scoring = cfg.scoring;
  const harbor = {
    ...HarborSection.parse(b.harbor),
    ...(kind === 'trusted' ? scoring.trusted_retry : scoring.agent_retry),
    ...(t.model !== undefined ? { model: t.model } : {}),
  };
  // Through the CLI's schema and builder (so every execution default is the CLI's: stop_grace, chunk_size…).
  const base = settingsFrom(
    evalConfigOf(
      {
        agent_repo: cfg.repo_path,
        tasks: { source: evalSourceOf(b.task_source) },
        harbor: t.nAttempts !== undefined ? { ...harbor, n_attempts: t.nAttempts } : harbor,
        scoring: {
          ...((t.metric ?? scoring.reward_key) ? { reward_key: t.metric ?? scoring.reward_key } : {}),
          aggregate: t.aggregate ?? (t.nAttempts !== undefined ? 'mean' : scoring.aggregate),
          // The verifier's evaluations fail on any infrastructure error anyway (finalize.ts).
          error_rate_threshold: kind === 'agent' ? scoring.error_rate_threshold : 1,
        },
        execution: {
          concurrency: cfg.max_concurrency,
          task_timeout: cfg.timeout_sec,
          task_attempts: kind === 'trusted' ? scoring.trusted_task_attempts : scoring.agent_task_attempts,
          heartbeat_timeout: cfg.heartbeat_timeout_sec,
          // No preflight: a candidate whose agent Harbor cannot import scores as its own failure (every task an
          // error row), never as an evaluation that failed for a config reason (which would look like a broken task).
          preflight: false,
        },
        home: cfg.paths.home,
      },
      'serve.json mode_b',
    ),
  );
  const upstream = cfg.task_services_use_upstream ? cfg.gateway?.upstreams.openai : undefined;
  return {
    ...base,
    isolation: {
      runAs: cfg.harness_user,
      passEnv: cfg.secrets,
      ...(envFile ? { envFile } : {}),
      ...(upstream ? { taskServicesUpstream: { keyEnv: upstream.key_env, baseUrl: `${upstream.base_url}/v1` } } : {}),
    },
  };
}
export class Engine {
  /** The workflows of agent evaluations now running, so that finalize can cancel what its drain left. */
  private readonly agentRuns = new Set<{ cancel(): Promise<unknown> }>();

  constructor(
    private readonly cfg: ServeConfig,
    private readonly temporal: { client: Client; taskQueue: string } | null,
    private readonly gateway: Gateway | null = null,
  ) {}

  /** Told every evaluation's outcome, the optimizer's and the trusted ones (the W&B reporter); must not throw. */
  readonly listeners: ((out: EvalOutcome, kind: EvaluationKind) => void)[] = [];

  /** The workflow id of each agent evaluation now running (Mode B), by evaluation key: for its progress. */
  private readonly workflowIds = new Map<string, string>();

  /** How far a running agent evaluation is (Mode B: tasks done of total, errors); undefined when unknown. */
  async progressOf(commit: string, split: string, ids: number[]): Promise<{ done: number; total: number; errors: number } | undefined> {
    const id = this.workflowIds.get(this.evaluationKey(commit, split, ids));
    if (!id || !this.temporal) return undefined;
    const p = await getProgress(this.temporal.client, id);
    return { done: p.done, total: p.total, errors: p.errors };
  }

  /** Sample ids of sample names (Mode B task names, Mode A row ids), refused by name when unknown. */
  idsOfNames(split: string, names: string[]): number[] {
    const all = this.splitSamples(split);
    const unknown = names.filter((n) => !all.includes(n));
    if (unknown.length) throw badRequest(`unknown case id(s) of split "${split}": ${unknown.join(', ')}`);
    return names.map((n) => all.indexOf(n));
  }

  /** Cancels every agent evaluation still running (their harbor runs are stopped); returns how many. */
  async cancelAgentEvaluations(): Promise<number> {
    const runs = [...this.agentRuns];
    await Promise.all(runs.map((h) => h.cancel().catch(() => undefined)));
    return runs.length;
  }

  /** Waits for `result` of a workflow, tracked as an agent evaluation while it runs. */
  private async tracked<T>(kind: EvaluationKind, handle: { cancel(): Promise<unknown> }, result: () => Promise<T>): Promise<T> {
    if (kind === 'agent') this.agentRuns.add(handle);
    try {
      return await result();
    } finally {
      this.agentRuns.delete(handle);
    }
  }

  /** Fail closed: a split that is not listed is no_access. */
  tier(split: string): SplitAccess {
    return this.cfg.splits.find((s) => s.split === split)?.access ?? 'no_access';
  }

  /** The sample names of a split, in their canonical order (ids are indices). */
  splitSamples(split: string): string[] {
    if (this.cfg.mode === 'B') return this.cfg.mode_b!.partition[split] ?? [];
    const a = this.cfg.mode_a!;
    if ('harness' in a) return a.partition[split] ?? [];
    const file = path.join(a.dataset_dir, `${split}.jsonl`);
    if (!fs.existsSync(file)) return [];
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l, i) => String((JSON.parse(l) as { id?: unknown }).id ?? i));
  }

  /**
   * The samples of an agent request, refused (before any budget is reserved) when an aggregate-only split is
   * asked for fewer cases than its minimum: the mean of one case is that case's score.
   */
  selectForAgent(split: string, req: SampleRequest): { ids: number[]; full: boolean } {
    const chosen = this.select(split, req);
    const spec = this.cfg.splits.find((s) => s.split === split);
    if (spec?.access === 'non_viewable') {
      const need = Math.min(spec.min_aggregate_cases, this.splitSamples(split).length);
      if (chosen.ids.length < need)
        throw badRequest(
          `split "${split}" shows only an aggregate score: a request must cover at least ${need} case(s), this one covers ${chosen.ids.length} (nothing was charged)`,
        );
    }
    return chosen;
  }

  select(split: string, req: SampleRequest): { ids: number[]; full: boolean } {
    const all = this.splitSamples(split);
    if (all.length === 0) throw notEvaluable(`split "${split}" has no samples`);
    if (req.sample_ids && req.num_samples !== undefined) throw badRequest('give sample_ids or num_samples, not both');
    if (req.sample_ids) {
      const bad = req.sample_ids.filter((i) => !Number.isInteger(i) || i < 0 || i >= all.length);
      if (bad.length) throw badRequest(`sample_ids out of range 0..${all.length - 1}: ${bad.join(', ')}`);
      const ids = [...new Set(req.sample_ids)].sort((a, b) => a - b);
      if (ids.length === 0) throw badRequest('sample_ids is empty');
      return { ids, full: ids.length === all.length };
    }
    const n = req.num_samples === undefined ? all.length : Math.min(req.num_samples, all.length);
    if (n < 1) throw badRequest('num_samples must be at least 1');
    return { ids: Array.from({ length: n }, (_, i) => i), full: n === all.length };
  }

  /**
   * `nAttempts` (Mode B, a target's `n_attempts`): that many trials per task, averaged, instead of the
   * configured attempts and aggregate. `failureValue`: what a case without a score counts as (a target's).
   * `run` (trusted, from 1): which run of a trusted evaluation this is; a run after the first is a workflow of
   * its own, never the earlier run's result again. `wave`: one wave of an early-stopping evaluation, which its
   * listeners are not told (they are told the whole evaluation once it ends: `report`).
   */
  async evaluate(
    commit: string,
    split: string,
    ids: number[],
    kind: EvaluationKind = 'agent',
    { wave, ...opts }: TargetScoring & { failureValue?: number; run?: number; wave?: boolean } = {},
  ): Promise<EvalOutcome> {
    const out = this.withObjective(await this.evaluateCases(commit, split, ids, kind, opts), opts.failureValue);
    if (!wave) this.report(out, kind);
    return out;
  }

  /** Tells the listeners an evaluation's outcome (an early-stopping evaluation's, its waves as one). */
  report(out: EvalOutcome, kind: EvaluationKind): void {
    for (const listener of this.listeners) listener(out, kind);
  }

  /** An outcome with its metrics and the objective's constraints it breaks (none: no `violations`). */
  private withObjective(out: EvalOutcome, failureValue?: number): EvalOutcome {
    const metrics = outcomeMetrics(out.samples, failureValue ?? this.cfg.objective.failure_value ?? 0);
    const violations = constraintViolations(metrics, this.cfg.objective.constraints ?? []);
    return { ...out, metrics, ...(violations.length ? { violations } : {}) };
  }

  private async evaluateCases(
    commit: string,
    split: string,
    ids: number[],
    kind: EvaluationKind,
    opts: TargetScoring & { failureValue?: number; run?: number },
  ): Promise<EvalOutcome> {
    const names = this.splitSamples(split);
    // The candidate's model calls go through the gateway with a token of this evaluation only (or the verifier's).
    const tokenId = kind === 'trusted' ? FINALIZATION_TOKEN_ID : `eval-${this.evaluationKey(commit, split, ids)}`;
    const envFile = this.gateway?.envFileFor(tokenId, kind === 'trusted' ? 'finalization' : 'evaluation');
    const refusedOf = (u: ScopeUsage | undefined) => (u?.refused_budget ?? 0) + (u?.refused_policy ?? 0);
    const refusedBefore = refusedOf(this.gateway?.usageOf(tokenId));
    // A case that failed counts as the failure value: 0 when maximising, the worst score when minimising.
    const failureValue = opts.failureValue ?? this.cfg.objective.failure_value ?? 0;
    // Transcripts and trial detail: only for what the optimizer may read per case (its own evaluations of a viewable split).
    const feedback = kind === 'agent' && this.tier(split) === 'viewable' ? this.cfg.feedback : undefined;
    const { samples, failed } =
      this.cfg.mode === 'B'
        ? await this.evaluateModeB(
            commit,
            ids.map((i) => names[i]!),
            ids,
            envFile,
            kind,
            opts,
            this.evaluationKey(commit, split, ids),
            feedback && { spec: feedback, failureValue },
          )
        : await this.evaluateModeA(commit, split, ids, envFile, kind, opts.run);
    const modelUsage = this.gateway
      ? kind === 'trusted'
        ? this.gateway.usageOf(tokenId)
        : this.gateway.endEvaluation(tokenId)
      : undefined;
    const refused = refusedOf(modelUsage) - refusedBefore;
    // Per task (Mode B: each harbor's base URL names its task); the verifier's token is shared by its evaluations.
    if (this.gateway && kind === 'agent') {
      const perTask = this.gateway.taskUsageOf(tokenId);
      for (const s of samples) if (perTask[s.name]) s.model_usage = perTask[s.name];
    }
    const errors = samples.filter((s) => s.score === null);
    const nInfraErrors = this.cfg.mode === 'B' ? errors.length : errors.filter((s) => !isCandidateFailure(s.error)).length;
    const health = attemptHealth(samples.map((x) => sampleAttempts(x, this.cfg.mode)));
    const meanScore = samples.length ? samples.reduce((a, s) => a + (s.score ?? failureValue), 0) / samples.length : failureValue;
    return {
      commit,
      split,
      samples,
      meanScore,
      nErrors: errors.length,
      nInfraErrors,
      fullSplit: ids.length === names.length,
      health,
      ...(this.cfg.mode === 'B' ? { trials: trialTotals(samples) } : {}),
      ...(modelUsage ? { modelUsage } : {}),
      ...invalidity(refused, modelUsage, kind, failed),
    };
  }

  /** What an evaluation is, as a short digest: the same request maps to the same token and workflow. */
  private evaluationKey(commit: string, split: string, ids: number[]): string {
    return shortDigest([commit, split, ids]);
  }

  /**
   * auto_best's trusted re-scoring as a race (Mode B): the shortlisted commits on `split`'s tasks in one seeded
   * order, the anytime-valid eliminations of `vero race` (docs/race.md). Its own runs, as every trusted evaluation
   * (nothing reused from the agent's); the same commits and split map to the same race, so a re-sent finalize
   * attaches to it.
   */
  async race(commits: string[], split: string, o: { confidence: number; margin: number }): Promise<RaceResult> {
    if (!this.temporal) throw new InfrastructureError('mode B needs a Temporal connection');
    const tasks = [...this.splitSamples(split)].sort();
    const settings = modeBSettings(this.cfg, undefined, 'trusted');
    const inputs = commits.map((commit) =>
      evalInputFor({ commit, candidateRef: commit, agentRepo: this.cfg.repo_path, home: this.cfg.paths.home, tasks, settings }),
    );
    const first = inputs[0]!;
    const seed = `${this.cfg.task_name}:${split}`;
    const raceId = `race-${shortDigest([first.configDigest, commits, o.confidence, o.margin, seed])}-verifier`;
    const input = RaceInput.parse({
      raceId,
      agentRepo: first.agentRepo,
      home: first.home,
      tasks,
      seed,
      configDigest: first.configDigest,
      settings: first.settings,
      candidates: inputs.map((e) => ({
        evalId: `${raceId}-${e.candidate.slice(0, 12)}`,
        fullEvalId: `${e.evalId}-verifier`,
        candidate: e.candidate,
        candidateRef: e.candidate,
      })),
      confidence: o.confidence,
      margin: o.margin,
      onEliminated: 'stop',
      stored: inputs.map(() => []),
    });
    await startRace(this.temporal.client, input, this.temporal.taskQueue);
    return raceResult(this.temporal.client, raceId);
  }

  private async evaluateModeB(
    commit: string,
    tasks: string[],
    ids: number[],
    envFile: string | undefined,
    kind: EvaluationKind,
    target: TargetScoring & { run?: number },
    key: string,
    feedback?: { spec: FeedbackSpec; failureValue: number },
  ): Promise<{ samples: SampleScore[]; failed?: string }> {
    if (!this.temporal) throw new InfrastructureError('mode B needs a Temporal connection');
    const settings = modeBSettings(this.cfg, envFile, kind, target);
    const shared = evalInputFor({
      commit,
      candidateRef: commit,
      agentRepo: this.cfg.repo_path,
      home: this.cfg.paths.home,
      tasks: [...tasks].sort(),
      settings,
    });
    // The verifier's evaluation is its own run (its own task attempts, its own model budget): it never reuses a
    // run the agent requested, which had fewer attempts and was metered on the agent's budget.
    const input = kind === 'trusted' ? { ...shared, evalId: `${shared.evalId}-verifier${runSuffix(target.run)}` } : shared;
    const { handle } = await startOrAttach(this.temporal.client, input, this.temporal.taskQueue);
    if (kind === 'agent') this.workflowIds.set(key, input.evalId);
    let result: CandidateResult;
    try {
      result = withTasks((await this.tracked(kind, handle, () => handle.result())) as CandidateResult);
    } finally {
      if (kind === 'agent') this.workflowIds.delete(key);
    }
    // 1 means never (the workflow would call an evaluation whose every task errored "failed" even then).
    const failed =
      kind === 'agent' && this.cfg.scoring.error_rate_threshold < 1 && result.status === 'failed'
        ? `${result.nErrors} of ${result.nTasks} task(s) have no rewarded trial, at or above scoring.error_rate_threshold ${result.errorRateThreshold}: not a score`
        : undefined;
    const byTask = new Map((result.tasks ?? []).map((t) => [t.task, t]));
    let secrets: string[] | undefined;
    const samples = tasks.map((name, i): SampleScore => {
      const t = byTask.get(name);
      const { dead, starved } = t ? rowAttempts(t) : { dead: 0, starved: 0 };
      // A trial whose reward is not valid is dead too: its task is an error row (after its attempts), never a low score.
      const trials = t
        ? {
            n_trials: t.nTrials,
            n_dead_trials: dead,
            n_invalid_trials: t.nInvalidTrials ?? 0,
            ...(starved ? { n_starved_trials: starved } : {}),
          }
        : {};
      const score = t?.score ?? null;
      const more =
        t && feedback
          ? caseFeedback(t.jobDir, name, {
              spec: feedback.spec,
              failed: score === null || score === feedback.failureValue,
              secrets: (secrets ??= transcriptSecrets(this.cfg, process.env)),
              rewardKey: settings.rewardKey,
            })
          : {};
      return { id: ids[i]!, name, score, error: t ? t.error : 'no result', ...trials, ...more };
    });
    return { samples, ...(failed ? { failed } : {}) };
  }

  /** How a Mode A evaluation scores: inference and the trusted scorer, or a command harness (its cases, its metric). */
  private modeAScoring(split: string): Pick<ModeAInput, 'datasetDir' | 'inference' | 'scorer' | 'harness'> {
    const a = this.cfg.mode_a!;
    if (!('harness' in a)) return { datasetDir: a.dataset_dir, inference: a.inference.command, scorer: a.scorer };
    // Unused with a harness; kept so the workflow's input keeps its shape.
    const unused = { datasetDir: '', inference: [], scorer: { command: [], cwd: '' } };
    return {
      ...unused,
      harness: {
        spec: a.harness,
        cases: this.splitSamples(split),
        metric: this.cfg.objective.metric ?? 'score',
        runAs: this.cfg.harness_user,
      },
    };
  }

  /**
   * Mode A runs as the `evaluateSamples` workflow: a sidecar restart resumes it, and the same commit, split
   * and samples map to the same workflow id, so a re-sent request attaches instead of running it again.
   */
  private async evaluateModeA(
    commit: string,
    split: string,
    ids: number[],
    envFile: string | undefined,
    kind: EvaluationKind,
    run?: number,
  ): Promise<{ samples: SampleScore[]; failed?: string }> {
    if (!this.temporal) throw new InfrastructureError('mode A needs a Temporal connection');
    const a = this.cfg.mode_a!;
    const key = shortDigest([a, this.cfg.timeout_sec, ids]);
    const workflowId = `modea-${commit}-${split}-${key}${this.gateway && kind === 'trusted' ? '-verifier' : ''}${runSuffix(run)}`;
    const { client, taskQueue } = this.temporal;
    const handle = client.workflow.getHandle<typeof evaluateSamples>(workflowId);
    const prev = await handle.describe().catch(() => null);
    if (!prev || !['RUNNING', 'COMPLETED'].includes(prev.status.name)) {
      await client.workflow.start(evaluateSamples, {
        workflowId,
        taskQueue,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        args: [
          {
            id: workflowId,
            repo: this.cfg.repo_path,
            commit,
            home: this.cfg.paths.home,
            split,
            ids,
            ...this.modeAScoring(split),
            timeoutSec: this.cfg.timeout_sec,
            ...(envFile ? { envFile } : {}),
          },
        ],
      });
    }
    const { resultFile } = await this.tracked(kind, handle, () => handle.result());
    return { samples: JSON.parse(fs.readFileSync(resultFile, 'utf8')) as SampleScore[] };
  }
}

/** Mode B's trial counts summed over an evaluation's samples (or its waves' totals). */
export function trialTotals(rows: Partial<NonNullable<EvalOutcome['trials']>>[]): NonNullable<EvalOutcome['trials']> {
  return {
    n_trials: rows.reduce((a, x) => a + (x.n_trials ?? 0), 0),
    n_dead_trials: rows.reduce((a, x) => a + (x.n_dead_trials ?? 0), 0),
    n_invalid_trials: rows.reduce((a, x) => a + (x.n_invalid_trials ?? 0), 0),
  };
}

/** Why an evaluation is invalid (never a low score): model calls the gateway refused it, or a failed run. */
function invalidity(
  refused: number,
  modelUsage: ScopeUsage | undefined,
  kind: EvaluationKind,
  failed: string | undefined,
): Pick<EvalOutcome, 'invalid' | 'invalidBy'> {
  if (refused > 0) {
    const why =
      (modelUsage?.refused_budget ?? 0) > 0
        ? `its ${kind === 'trusted' ? 'finalization' : 'evaluation'} budget is spent`
        : 'its scope does not allow them (see the gateway request log)';
    return { invalid: `the gateway refused ${refused} model call(s) of this evaluation: ${why}`, invalidBy: 'gateway' };
  }
  return failed ? { invalid: failed, invalidBy: 'error_rate' } : {};
}
