/**
 * scaleapi/vero's build.yaml (its HarborBuildConfig, build/{config,specs,loader}.py), as a strict zod schema with
 * vero's defaults, so a vero file is read with vero's meaning. compiler/vero-mapping.ts turns it into ours.
 */
import { z } from 'zod';
import { CONSTRAINT_OPERATORS } from '../model/compiled-task/objective';

const num = (min?: number) => (min === undefined ? z.number().finite() : z.number().finite().min(min));
const positive = z.number().finite().positive();
const nonEmpty = z.string().refine((s) => s.trim() !== '', 'must not be empty');
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name');

/** What a scope of vero's inference gateway may call, and its limits. */
export const VeroScope = z.strictObject({
  allowed_models: z.array(nonEmpty).min(1),
  model_aliases: z.record(nonEmpty, nonEmpty).default({}),
  max_requests: z.number().int().min(1).nullable().default(null),
  max_tokens: z.number().int().min(1).nullable().default(null),
  max_concurrency: z.number().int().min(1).default(8),
});
export type VeroScope = z.infer<typeof VeroScope>;

const VeroGateway = z.strictObject({
  upstream_api_key_env: envName.default('OPENAI_API_KEY'),
  upstream_base_url_env: envName.nullable().default('OPENAI_BASE_URL'),
  default_upstream_base_url: z
    .string()
    .regex(/^https?:\/\//, 'expected an http(s) URL')
    .default('https://api.openai.com/v1'),
  producer: VeroScope,
  evaluation: VeroScope,
  finalization: VeroScope.nullable().default(null),
  log_requests: z.boolean().default(true),
  request_log_body_bytes: z.number().int().min(0).default(16384),
  request_log_attribution: z.boolean().default(false),
});

const MetricSelector = z.strictObject({
  metric: nonEmpty,
  aggregation: z.string().default('report'),
  case_failure_value: num().nullable().default(null),
});

export const VeroBuildFile = z.strictObject({
  // What is optimized.
  name: nonEmpty,
  description: z.string().default(''),
  agent_repo: nonEmpty,
  harbor_requirement: z
    .string()
    .refine(
      (v) => /(?:^|\s)harbor(?:\[[A-Za-z0-9_.-]+(?:,[A-Za-z0-9_.-]+)*\])?\s*==\s*[^*\s,;]+/.test(v) || /@[0-9a-f]{7,64}(?:#.*)?$/.test(v),
      'must pin an exact version or Git commit',
    ),
  partitions: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, "expected letters, digits, '.', '_', '-'"), z.array(nonEmpty).min(1)),
  task_manifest: z.string().nullable().default(null),
  instruction_template: z.string().nullable().default(null),
  base_image_main: nonEmpty.optional(),
  base_image_sidecar: nonEmpty.optional(),
  // The nested `harbor run`.
  evaluation_backend: z.enum(['harbor', 'command']).default('harbor'),
  command_backend: z
    .strictObject({
      harness_source: nonEmpty,
      command: z.array(nonEmpty).min(1),
      working_directory: z.string().default('.'),
      environment: z.record(z.string(), z.string()).default({}),
      passthrough_environment: z.array(envName).default([]),
      staged_inputs: z.record(z.string(), z.string()).default({}),
      agent_context_inputs: z.record(z.string(), z.array(z.string())).default({}),
    })
    .nullable()
    .default(null),
  task_source: nonEmpty.nullable().default(null),
  agent_import_path: nonEmpty.nullable().default(null),
  model: nonEmpty.nullable().default(null),
  environment_name: nonEmpty.default('modal'),
  harbor_python_version: nonEmpty.default('3.12'),
  default_index: nonEmpty.default('https://pypi.org/simple'),
  n_attempts: z.number().int().min(1).default(1),
  max_retries: z.number().int().min(0).default(2),
  retry_wait_multiplier: num(1).default(2),
  retry_min_wait_seconds: num(0).default(4),
  retry_max_wait_seconds: num(0).default(60),
  infrastructure_max_attempts: z.number().int().min(1).default(3),
  infrastructure_retry_delay_seconds: num(0).default(5),
  reward_key: nonEmpty.nullable().default(null),
  aggregate_attempts: z.enum(['best', 'mean']).default('mean'),
  feedback_transcripts: z.boolean().default(false),
  feedback_max_bytes: z.number().int().min(0).default(3000),
  expose_attempt_detail: z.boolean().default(false),
  extra_harbor_args: z.array(z.string()).default([]),
  optimizer_harbor_args: z.array(z.string()).default([]),
  task_agent_timeout_seconds: positive.default(600),
  task_environment: z.record(z.string(), z.string()).default({}),
  task_services_use_upstream: z.boolean().default(false),
  // Search and selection.
  agent_access: z.array(
    z.strictObject({
      partition: nonEmpty,
      disclosure: z.enum(['full', 'aggregate', 'none']).default('aggregate'),
      expose_case_resources: z.boolean().default(false),
      min_aggregate_cases: z.number().int().min(1).default(5),
      total_runs: z.number().int().min(0).nullable().default(null),
      total_cases: z.number().int().min(0).nullable().default(null),
    }),
  ),
  selection_partition: nonEmpty,
  targets: z
    .array(
      z.strictObject({
        partition: nonEmpty,
        reward_key: nonEmpty.default('reward'),
        model: nonEmpty.nullable().default(null),
        parameters: z.record(z.string(), z.unknown()).default({}),
        failure_value: num().default(0),
        baseline_reward: num().nullable().default(null),
        max_attempts: z.number().int().min(1).default(1),
        n_attempts: z.number().int().min(1).nullable().default(null),
        aggregate_attempts: z.enum(['best', 'mean']).nullable().default(null),
      }),
    )
    .min(1),
  evaluation_set_name: nonEmpty.default('harbor'),
  objective: z
    .strictObject({
      selector: MetricSelector,
      direction: z.enum(['maximize', 'minimize']),
      failure_value: num().nullable().default(null),
      constraints: z.array(z.strictObject({ selector: MetricSelector, operator: z.enum(CONSTRAINT_OPERATORS), value: num() })).default([]),
    })
    .default({
      selector: { metric: 'score', aggregation: 'report', case_failure_value: null },
      direction: 'maximize',
      failure_value: null,
      constraints: [],
    }),
  reward_mode: z.enum(['submit', 'auto_best']).default('auto_best'),
  baseline_floor: z.boolean().default(false),
  baseline_selection_score: num().nullable().default(null),
  score_baseline: z.boolean().default(true),
  rescore_top_k: z.number().int().min(1).default(3),
  rescore_attempts: z.number().int().min(1).default(1),
  selection_coverage_threshold: z.number().min(0).max(1).default(0.9),
  // Limits.
  timeout_seconds: positive.default(1800),
  case_timeout_seconds: positive.default(180),
  max_concurrency: z.number().int().min(1).default(8),
  error_rate_threshold: z.number().gt(0).max(1).nullable().default(0.1),
  build_timeout_seconds: z.number().int().min(1).default(1800),
  verifier_timeout_seconds: z.number().int().min(1).nullable().default(null),
  evaluation_drain_timeout_seconds: positive.nullable().default(null),
  // The containers.
  secrets: z
    .array(envName)
    .nullable()
    .default([])
    .transform((s) => s ?? []),
  inference_gateway: VeroGateway.nullable().default(null),
  wandb: z
    .strictObject({
      project: nonEmpty,
      entity: z.string().nullable().optional(),
      name: z.string().nullable().optional(),
      group: z.string().nullable().optional(),
      tags: z.array(z.string()).default([]),
      mode: z.string().nullable().optional(),
      notes: z.string().nullable().optional(),
      run_id: z.string().nullable().optional(),
      log_traces: z.boolean().default(false),
    })
    .nullable()
    .default(null),
  agent_env: z.record(z.string(), z.string()).default({}),
  harness_user: z.string().nullable().default('harness'),
  // The optimizer's workspace.
  read_only_paths: z.array(z.string()).default([]),
  workspace_overlays: z.array(z.strictObject({ source: nonEmpty, dest: z.string().default('.') })).default([]),
  include_evals_skill: z.boolean().default(true),
  instruct_multifidelity: z.boolean().default(true),
  instruct_exhaust_budget: z.boolean().default(true),
  disclose_budget: z.boolean().default(true),
});
export type VeroBuild = z.infer<typeof VeroBuildFile>;

/** Keys only vero's format has: a file with any of them (and no `mode`) is read as vero's. */
const VERO_ONLY_KEYS = [
  'agent_access',
  'selection_partition',
  'task_source',
  'partitions',
  'partition_files',
  'evaluation_backend',
  'harbor_requirement',
  'agent_import_path',
];

export const isVeroFormat = (raw: unknown): raw is Record<string, unknown> =>
  typeof raw === 'object' && raw !== null && !('mode' in raw) && VERO_ONLY_KEYS.some((k) => k in raw);
