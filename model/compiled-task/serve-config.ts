/**
 * The compiler ↔ eval-sidecar contract: `environment/sidecar/serve.json`. The compiler writes it through this
 * schema and the sidecar loads it through the same schema.
 */
import { z } from 'zod';
import { GatewaySpec } from '../gateway/policy';
import { HarborSection } from '../harbor/config';
import { CONSTRAINT_OPERATORS } from './objective';
import { HarnessSpec } from './command-harness';
import { WandbSpec } from './wandb-spec';

export const SplitAccess = z.enum(['viewable', 'non_viewable', 'no_access']);
export type SplitAccess = z.infer<typeof SplitAccess>;

export const SplitName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'expected a split name of letters, digits, _ . -');

/** A Harbor reward key (`reward`, `pass`, …). */
const RewardKey = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'expected a reward key of letters, digits, _ . -');

export const BudgetSpec = z
  .strictObject({
    split: SplitName,
    total_run_budget: z.number().int().min(0).optional(),
    total_sample_budget: z.number().int().min(0).optional(),
    max_samples_per_run: z.number().int().min(1).optional(),
  })
  .refine((b) => b.total_run_budget !== undefined || b.total_sample_budget !== undefined, {
    message: 'expected total_run_budget and/or total_sample_budget',
  });

export const TargetSpec = z.strictObject({
  split: SplitName,
  reward_key: RewardKey.default('reward'),
  sample_ids: z.array(z.number().int().min(0)).optional(),
  /**
   * The seed agent's reward on this target, pinned from repeated runs: reported next to the reward
   * (`baselines`), and the reward when the baseline floor grades the seed, without scoring it again.
   */
  baseline_reward: z.number().finite().optional(),
  /**
   * Mode B: score this target with this many trials per task, averaged (one pass of a noisy benchmark is too
   * noisy to compare with a baseline). Default: `harbor.n_attempts` and `scoring.aggregate`.
   */
  n_attempts: z.number().int().min(1).max(20).optional(),
  /** The score a case that failed counts as on this target, and the target's score with no candidate (default: objective's). */
  failure_value: z.number().finite().optional(),
  /** Mode B: the Harbor reward key this target is scored by (default: `scoring.reward_key`). */
  metric: RewardKey.optional(),
  /** Mode B: how a task's trials combine on this target (default: `mean` with n_attempts, else `scoring.aggregate`). */
  aggregate: z.enum(['best', 'mean']).optional(),
  /** Mode B: the model (`harbor run -m`) this target's trusted scoring runs with (default: `harbor.model`). */
  model: z.string().min(1).optional(),
  /**
   * How many times this target's trusted evaluation runs, each a run of its own, while it cannot score for
   * infrastructure reasons (an unscored case, a starved attempt, a failed run); after the last, finalize fails
   * (no reward: never the failure value). Default 1.
   */
  max_attempts: z.number().int().min(1).max(10).optional(),
});

/**
 * What is optimised: `maximize` (default) or `minimize` a score. Minimised scores are negated into the reward
 * (model/compiled-task/objective.ts); `failure_value` is what a failed case and "no candidate" count as (required to minimise,
 * default 0 to maximise).
 */
export const ObjectiveSpec = z.strictObject({
  direction: z.enum(['maximize', 'minimize']).default('maximize'),
  failure_value: z.number().finite().optional(),
  /**
   * The metric of the evaluation's report that is the score (vero's `objective.selector.metric`): mode A's
   * harness reports any; Harbor's and the JSONL scorer's report `score` (the mean; absent: `score`).
   */
  metric: z.string().min(1).optional(),
  /**
   * Metrics the candidate must satisfy (vero's `objective.constraints`): one that breaks any is never chosen by
   * auto_best, and a target it breaks one on rewards the target's failure value.
   */
  constraints: z
    .array(z.strictObject({ metric: z.string().min(1), operator: z.enum(CONSTRAINT_OPERATORS), value: z.number().finite() }))
    .optional(),
});
export type ObjectiveSpec = z.infer<typeof ObjectiveSpec>;

/**
 * A split and what the agent may see of it. `min_aggregate_cases` (non_viewable only, default 5): an
 * aggregate-only request must cover at least that many cases (or the whole split when it is smaller), or one
 * case's score would be its "mean".
 */
export const SplitSpec = z.strictObject({
  split: SplitName,
  access: SplitAccess,
  min_aggregate_cases: z.number().int().min(1).default(5),
  /**
   * Mode B, a split the agent may evaluate: its tasks (each whole Harbor task dir: instruction, environment, tests,
   * solution) are copied for the optimizer to read under `<agent volume>/tasks/<split>/` (vero's
   * `expose_case_resources`). A hidden split's never.
   */
  expose_case_resources: z.boolean().optional(),
});
export type SplitSpec = z.infer<typeof SplitSpec>;

/**
 * Mode B: what the optimizer learns of each case of a viewable split beyond its score (vero's
 * `feedback_transcripts`, `feedback_max_bytes`, `expose_attempt_detail`). `transcripts`: a case that failed (no
 * reward, or the failure value) carries the tail of the evaluated agent's transcript (`agent/terminus_2.pane` or
 * `agent/trajectory.json` of its first trial that has one), secrets redacted, at most `max_bytes` bytes (0 = none).
 * `attempt_detail`: each case carries its trials' rewards and exceptions. Aggregate-only and hidden splits: never.
 */
export const FeedbackSpec = z.strictObject({
  transcripts: z.boolean().default(false),
  max_bytes: z.number().int().min(0).default(3000),
  attempt_detail: z.boolean().default(false),
});
export type FeedbackSpec = z.infer<typeof FeedbackSpec>;

/**
 * How Mode B evaluations are scored. `aggregate`/`reward_key` as in vero.yaml's harbor scoring (best or mean
 * over a task's attempts; which reward key). Task attempts (whole harbor runs of a task without a rewarded
 * trial, retried): the agent's evaluations get `agent_task_attempts` (default 1: a candidate that makes its
 * hard tasks crash gains nothing from retries, a dead task is its failure), the verifier's
 * `trusted_task_attempts` (default 3: an infrastructure failure must not cost the reward).
 */
const RetryOverride = z.strictObject({
  max_retries: z.number().int().min(0).optional(),
  retry_wait_multiplier: z.number().positive().optional(),
  retry_min_wait_sec: z.number().min(0).optional(),
  retry_max_wait_sec: z.number().positive().optional(),
});

export const ScoringSpec = z.strictObject({
  aggregate: z.enum(['best', 'mean']).default('best'),
  reward_key: RewardKey.nullable().default(null),
  agent_task_attempts: z.number().int().min(1).max(10).default(1),
  trusted_task_attempts: z.number().int().min(1).max(10).default(3),
  /**
   * Mode B: an agent evaluation with at least this share of its tasks in error (no rewarded trial) is not a
   * score: recorded invalid (never shortlisted), answered `status: failed`. 1 = never.
   */
  error_rate_threshold: z.number().min(0).max(1).default(1),
  /**
   * Harbor's retries for each kind of evaluation, over the `harbor` section: e.g. patient backoff for the
   * verifier's, whose reward must survive a rate-limit storm, and none for the agent's.
   */
  agent_retry: RetryOverride.optional(),
  trusted_retry: RetryOverride.optional(),
});
export type ScoringSpec = z.infer<typeof ScoringSpec>;
export const DEFAULT_SCORING: ScoringSpec = {
  aggregate: 'best',
  reward_key: null,
  agent_task_attempts: 1,
  trusted_task_attempts: 3,
  error_rate_threshold: 1,
};

/** Fixed container paths of a compiled task. */
export const CONTAINER = {
  veroDir: '/opt/vero',
  baseline: '/opt/agent-baseline',
  seed: '/opt/agent-seed',
  overlay: '/opt/overlay',
  workAgent: '/workspace/agent',
  home: '/opt/vero_home',
  innerTask: '/opt/inner-task',
  dataset: '/opt/dataset',
  scorer: '/opt/scorer',
  harness: '/opt/harness',
  serveJson: '/opt/serve.json',
  agentVolume: '/state/agent-results',
  adminVolume: '/state/admin',
  tokenPath: '/state/token/admin.token',
  /** The build's digest (compiler/build-digest.ts), which a session snapshot records and a resume must match. */
  buildDigest: '/opt/vero-build-digest',
  /** The key `vero snapshot` seals a session's ledger with (sidecar/ledger-seal.ts); the sidecar's user only. */
  ledgerSealKey: '/opt/vero-ledger-seal.key',
  /** A rescued session to resume from (`vero run --resume-from` mounts it here, read-only; else an empty volume). */
  resumeDir: '/state/resume',
  sidecarUrl: 'http://eval-sidecar:8000',
} as const;

export const ServeConfig = z.strictObject({
  schema_version: z.literal(1),
  task_name: z.string(),
  mode: z.enum(['A', 'B']),
  repo_path: z.string(),
  agent_repo_path: z.string(),
  base_commit: z.string().regex(/^[0-9a-f]{40}$/),
  splits: z.array(SplitSpec).min(1),
  budgets: z.array(BudgetSpec),
  reward_mode: z.enum(['submit', 'auto_best']),
  selection_split: SplitName,
  auto_best_k: z.number().int().min(1),
  /** Runs of each trusted re-score (a shortlisted candidate, the seed for the floor) while it cannot score; default 1. */
  rescore_attempts: z.number().int().min(1).max(10).optional(),
  /** auto_best's trusted re-scoring of the shortlist as a race (Mode B): its confidence and practical margin. */
  auto_best_race: z.strictObject({ confidence: z.number().gt(0.5).lt(1), margin: z.number().min(0).max(1) }).optional(),
  /** The optimizer's evaluations stop early against the incumbent (sidecar/early-stop-run.ts); absent: off. */
  eval_early_stop: z
    .strictObject({ confidence: z.number().gt(0.5).lt(1), margin: z.number().min(0).max(1), running: z.enum(['stop', 'finish']) })
    .optional(),
  /** The share of the selection split an evaluation must cover to enter auto_best's shortlist. */
  min_selection_coverage: z.number().min(0).max(1).default(0.9),
  baseline_floor: z.boolean(),
  /** The seed's pinned score on the selection split: the baseline floor compares with it instead of re-scoring. */
  baseline_selection_score: z.number().finite().optional(),
  /** Score the seed on every target without a pinned baseline_reward, and report it next to the reward. */
  score_baseline: z.boolean().default(false),
  targets: z.array(TargetSpec).min(1),
  submit_enabled: z.boolean(),
  /** Files, dirs or globs of the agent repo a candidate may not change (compared with base_commit). */
  read_only_paths: z.array(z.string().min(1)).default([]),
  /** Names only: values come from the sidecar's environment, never from a file. */
  secrets: z.array(z.string()),
  /**
   * The OS user the candidate's harness (the nested `harbor run`) runs as; null: the sidecar's own user, without
   * isolation (a trust decision of the build: candidate code can then read the sidecar's keys and held-out state).
   */
  harness_user: z.string().nullable(),
  /**
   * Task-owned model services (user simulators, graders) get the real upstream as OPENAI_API_KEY/OPENAI_BASE_URL,
   * the candidate's own calls stay on the gateway as VERO_AGENT_INFERENCE_*; only with harness_user null. Absent:
   * false (written only when set, so a build without it keeps its serve.json, and its build digest).
   */
  task_services_use_upstream: z.boolean().optional(),
  timeout_sec: z.number().positive(),
  /**
   * How long finalize waits for agent evaluations still running (their candidates may be the best), refusing
   * new ones, before it cancels what is left (seconds).
   */
  drain_timeout_sec: z.number().min(0).default(600),
  /** How soon a nested evaluation moves on from a dead worker (seconds). */
  heartbeat_timeout_sec: z.number().positive().default(60),
  max_concurrency: z.number().int().min(1),
  paths: z.strictObject({
    home: z.string(),
    agent_volume: z.string(),
    admin_volume: z.string(),
    token_path: z.string(),
    /** The file holding the build's digest (absent in builds made before it existed: no snapshot can be resumed). */
    build_digest: z.string().optional(),
    /** The file holding the ledger-seal key (absent in builds made before ledgers were sealed: not sealed, not checked). */
    ledger_seal_key: z.string().optional(),
    /** Where a rescued session to resume from is mounted (applied once, to a session dir with no state yet). */
    resume_dir: z.string().optional(),
  }),
  scoring: ScoringSpec.default(DEFAULT_SCORING),
  objective: ObjectiveSpec.default({ direction: 'maximize' }),
  /** vero's disclose_budget: false keeps the remaining budget from the optimizer (still enforced); absent: shown. */
  disclose_budget: z.literal(false).optional(),
  mode_b: z
    .strictObject({
      harbor: HarborSection,
      /** The inner tasks: a dir baked into the sidecar, or a registry dataset its Harbor resolves (`-d`, pinned). */
      task_source: z.union([
        z.strictObject({ path: z.string() }),
        z.strictObject({
          dataset: z.string(),
          registry_path: z.string().optional(),
          registry_url: z.string().optional(),
          /** The build's pin (harbor/dataset-ref.ts): a baked legacy dataset is checked against it at start. */
          digest: z.string().optional(),
        }),
      ]),
      partition: z.record(SplitName, z.array(z.string()).min(1)),
    })
    .optional(),
  mode_a: z
    .union([
      z.strictObject({
        dataset_dir: z.string(),
        inference: z.strictObject({ command: z.array(z.string()).min(1) }),
        scorer: z.strictObject({ command: z.array(z.string()).min(1), cwd: z.string() }),
      }),
      z.strictObject({ harness: HarnessSpec, partition: z.record(SplitName, z.array(z.string()).min(1)) }),
    ])
    .optional(),
  /** The inference gateway (model calls of the optimizer and the candidates, metered, keys held here). */
  gateway: GatewaySpec.optional(),
  /** Mode B: transcripts and trial detail in a viewable split's per-case results. */
  feedback: FeedbackSpec.optional(),
  /** Weights & Biases reporting of this sidecar's evaluations (sidecar/wandb-reporter.ts). */
  wandb: WandbSpec.optional(),
  host: z.string(),
  /** 0 = any free port. */
  port: z.number().int().min(0).max(65535),
});
export type ServeConfig = z.infer<typeof ServeConfig>;
