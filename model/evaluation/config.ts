/**
 * `vero.yaml`: what to evaluate and how. One zod schema (unknown keys are errors naming their path);
 * infra/eval-config-file.ts reads the file, applies CLI overrides and resolves relative paths.
 */
import { z } from 'zod';
import { DurationSeconds } from '../durations';
import { HarborSection } from '../harbor/config';
import { SPEND_POOL_NAME } from './spend-cap';

const TaskSource = z
  .strictObject({
    /** A local dataset dir or a single task dir: `harbor run -p`. */
    path: z.string().min(1).optional(),
    /** A registry dataset `name[@version]` or `org/name[@ref]`: `harbor run -d`. */
    dataset: z.string().min(1).optional(),
    /** A local registry.json for `dataset` (`--registry-path`). */
    registry_path: z.string().min(1).optional(),
    /** A legacy registry.json's URL for `dataset` (`--registry-url`). */
    registry_url: z.string().min(1).optional(),
  })
  .superRefine((s, ctx) => {
    if ((s.path === undefined) === (s.dataset === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'expected exactly one of `path` (local tasks, -p) or `dataset` (registry, -d)' });
    }
    if (s.registry_path && !s.dataset) ctx.addIssue({ code: 'custom', path: ['registry_path'], message: 'only valid with `dataset`' });
    if (s.registry_url && (!s.dataset || s.registry_path))
      ctx.addIssue({ code: 'custom', path: ['registry_url'], message: 'only valid with `dataset`, and not with registry_path' });
  });

const TaskSelection = z.strictObject({
  source: TaskSource,
  /** Explicit task names (dir basenames; `org/name` for registry packages). */
  names: z.array(z.string().min(1)).optional(),
  include: z.array(z.string().min(1)).optional(),
  exclude: z.array(z.string().min(1)).optional(),
  /** Harbor's `-l/--n-tasks`: only the first N tasks after include and exclude, in task-name order. */
  limit: z.number().int().min(1).optional(),
  /** A split of a partition file: `{splits: {train: [...], test: [...]}}` (YAML or JSON). */
  partition: z.strictObject({ file: z.string().min(1), split: z.string().min(1) }).optional(),
});

const Scoring = z.strictObject({
  /** The reward to read; default `pass`, then `reward`, then the mean of all rewards. */
  reward_key: z.string().min(1).optional(),
  /** Per-task aggregation over attempts: the best trial, or the mean over scored attempts. */
  aggregate: z.enum(['best', 'mean']).default('best'),
  /** The evaluation is `failed` when errored tasks / all tasks reaches this. */
  error_rate_threshold: z.number().min(0).max(1).default(0.25),
});

/** Node's timers overflow past 2^31 ms (about 596 h); durations are kept well below. */
const MAX_TIMER_SEC = 1_800_000;

/** The most tasks one evaluation may run at once (`execution.concurrency`, `vero set-concurrency`). */
export const MAX_CONCURRENCY = 1000;

const Execution = z
  .strictObject({
    /** Tasks (harbor processes) in flight per evaluation; `vero set-concurrency` changes it while it runs. */
    concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).default(4),
    /** Wall-clock limit of one task's harbor run; finished trials are salvaged when it expires. At most 500h. */
    task_timeout: DurationSeconds.pipe(z.number().max(MAX_TIMER_SEC, 'expected at most 500h (1800000 s)')).default(7200),
    /** Runs of a task whose trials all failed for infrastructure reasons (Temporal activity attempts). */
    task_attempts: z.number().int().min(1).max(20).default(3),
    heartbeat_timeout: DurationSeconds.default(60),
    /** Tasks per child workflow; keeps each history far below Temporal's limits. */
    chunk_size: z.number().int().min(1).max(1000).default(500),
    /**
     * Chunks one run of the evaluation workflow starts before it continues as new, so its history stays bounded
     * at any task count. Default: what fits 8,000 events at this concurrency (model/evaluation/history-bounds.ts).
     */
    chunks_per_run: z.number().int().min(1).optional(),
    /**
     * How long a stopped harbor (cancel, task timeout, orphan) gets to tear its trials down before it is
     * killed and vero removes what the trials left in Docker. Harbor needs about 21 s per Docker trial.
     */
    stop_grace: DurationSeconds.pipe(z.number().max(3600, 'expected at most 1h')).default(60),
    /**
     * Tasks whose harbors may be tearing down at once beside the `concurrency` running ones, per chunk: once every
     * trial of a task has passed its verifier, its lane starts the next task while Harbor stops the trials'
     * environments (about 10 s per trial on Docker) and writes their results. Default: twice the concurrency (a
     * teardown outlasts a short task's work); 0: a task keeps its lane until its harbor exits.
     */
    teardown_concurrency: z.number().int().min(0).max(MAX_CONCURRENCY).optional(),
    /** Run `harbor run --dry-run` once before the tasks, so config errors fail in seconds (Harbor ≥ 0.25). */
    preflight: z.boolean().default(true),
    /**
     * Spend caps: once the finished tasks' trials report this many dollars (Harbor's `cost_usd`) or tokens (input
     * + output), no new task starts, running ones finish (or stop after `budget_grace`), and the evaluation ends
     * `budget_exhausted` with the rest as `not_run` rows. With `spend_pool`, the caps are the pool's: one total
     * over every evaluation that names it (a candidate batch), kept by a Temporal workflow.
     */
    max_cost_usd: z.number().positive().optional(),
    max_tokens: z.number().int().positive().optional(),
    budget_grace: DurationSeconds.pipe(z.number().max(MAX_TIMER_SEC, 'expected at most 500h (1800000 s)')).optional(),
    spend_pool: z.string().regex(SPEND_POOL_NAME, 'expected a name of letters, digits, ".", "_" or "-" (at most 100)').optional(),
  })
  .superRefine((e, ctx) => {
    const capped = e.max_cost_usd !== undefined || e.max_tokens !== undefined;
    if (!capped && e.budget_grace !== undefined)
      ctx.addIssue({ code: 'custom', path: ['budget_grace'], message: 'only valid with max_cost_usd or max_tokens' });
    if (!capped && e.spend_pool !== undefined)
      ctx.addIssue({ code: 'custom', path: ['spend_pool'], message: "only valid with max_cost_usd or max_tokens (the pool's caps)" });
  });
const TemporalSection = z.strictObject({
  address: z.string().min(1).default('127.0.0.1:7233'),
  namespace: z.string().min(1).default('default'),
  task_queue: z.string().min(1).default('vero-harbor'),
});
/** The Temporal defaults, spelled once (the schema's): every command, the dev server and the sidecar use these. */
export const TEMPORAL_DEFAULTS = TemporalSection.parse({});

export const EvalConfigFile = z.strictObject({
  /** The git repo whose commits are candidates. */
  agent_repo: z.string().min(1),
  tasks: TaskSelection,
  harbor: HarborSection.default(HarborSection.parse({})),
  scoring: Scoring.default(Scoring.parse({})),
  execution: Execution.default(Execution.parse({})),
  temporal: TemporalSection.default(TemporalSection.parse({})),
  /** Where results, worktrees and job dirs go (default $VERO_HOME, else ~/.vero). */
  home: z.string().min(1).optional(),
});
export type EvalConfig = z.infer<typeof EvalConfigFile> & { home: string; configFile: string | null };

/** Sets `value` at a dotted path of a plain object (creating objects on the way). */
export function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys.at(-1)!] = value;
}
