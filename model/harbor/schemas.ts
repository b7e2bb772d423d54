/**
 * zod schemas for the Harbor (0.22–0.26) JSON files vero-harbor reads (reference/harbor.md §3). Collation's hot
 * path does not load them (model/harbor/result.ts isTrialResult): zod is ≈ 50 ms of start-up for `vero trials`.
 */
import { z } from 'zod';

const timestamp = z.string().nullish();

/** Harbor 0.26's verdict on an exception (model/harbor/error-policy.ts); absent in 0.25 results. */
const ExceptionPolicy = z.looseObject({
  should_retry: z.boolean().nullish(),
  should_grade: z.boolean().nullish(),
  has_valid_reward: z.boolean().nullish(),
});

const ExceptionInfo = z.looseObject({
  exception_type: z.string(),
  exception_message: z.string().nullish(),
  exception_traceback: z.string().nullish(),
  occurred_at: timestamp,
  policy: ExceptionPolicy.nullish(),
});

/** The result-file schema versions vero-harbor reads: omitted means 1 (Harbor ≤ 0.25 writes none; 0.26 writes 1). */
export const KNOWN_RESULT_SCHEMA_VERSIONS: readonly number[] = [1];

const TaskId = z.union([
  z.looseObject({ path: z.string() }),
  z.looseObject({ org: z.string(), name: z.string(), ref: z.string().nullish() }),
]);

/** The fields of `TrialResult` that collation uses; other fields are kept but not checked. */
export const TrialResult = z.looseObject({
  schema_version: z
    .number()
    .refine((v) => KNOWN_RESULT_SCHEMA_VERSIONS.includes(v), {
      message: `is not a result schema version vero-harbor reads (known: ${KNOWN_RESULT_SCHEMA_VERSIONS.join(', ')})`,
    })
    .optional(),
  id: z.string().optional(),
  task_name: z.string(),
  trial_name: z.string(),
  task_id: TaskId.optional(),
  source: z.string().nullish(),
  config: z.looseObject({ task: z.looseObject({ path: z.string().nullish() }).optional() }).optional(),
  verifier_result: z.looseObject({ rewards: z.record(z.string(), z.number()).nullish() }).nullish(),
  exception_info: ExceptionInfo.nullish(),
  /** Harbor ≥ 0.26: whether the reward counts (its job mean counts only these). */
  reward_valid: z.boolean().nullish(),
  agent_result: z
    .looseObject({
      cost_usd: z.number().nullish(),
      n_input_tokens: z.number().nullish(),
      n_output_tokens: z.number().nullish(),
      n_cache_tokens: z.number().nullish(),
    })
    .nullish(),
  started_at: timestamp,
  finished_at: timestamp,
});
export type TrialResult = z.infer<typeof TrialResult>;

/** The job's `lock.json` (schema 3 in Harbor 0.25): which Harbor ran the job. */
export const JobLock = z.looseObject({
  schema_version: z.number().optional(),
  harbor: z.looseObject({ version: z.string() }).optional(),
});
