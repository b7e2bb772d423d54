/**
 * Harbor's Agent Trajectory Interchange Format (ATIF), the `agent/trajectory.json` of a trial, as zod schemas.
 * Read from Harbor's own pydantic models (`harbor/models/trajectories/*.py`), identical in the supported Harbor
 * versions 0.25.0 and 0.26.0: schema versions ATIF-v1.0 … v1.8, every object closed to unknown keys, steps
 * numbered from 1, fields only an agent step may carry, and observation results that name a tool call of their
 * own step. The viewer validates a trajectory step by step as it streams (client/trajectory-page.ts), so the
 * whole-document rules are spelled per step here.
 */
import { z } from 'zod';

const ATIF_VERSIONS = [
  'ATIF-v1.0',
  'ATIF-v1.1',
  'ATIF-v1.2',
  'ATIF-v1.3',
  'ATIF-v1.4',
  'ATIF-v1.5',
  'ATIF-v1.6',
  'ATIF-v1.7',
  'ATIF-v1.8',
] as const;

const Extra = z.record(z.string(), z.unknown()).nullish();

const ImageSource = z.strictObject({ media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), path: z.string() });
const AudioSource = z.strictObject({ media_type: z.string(), path: z.string(), duration_sec: z.number().min(0).nullish() });

/** A part of a multimodal message or observation (ATIF-v1.6; audio since v1.8). */
export const ContentPart = z
  .strictObject({
    type: z.enum(['text', 'image', 'audio']),
    text: z.string().nullish(),
    source: z.union([ImageSource, AudioSource]).nullish(),
  })
  .superRefine((p, ctx) => {
    if (p.type === 'text' && (p.text == null || p.source != null))
      ctx.addIssue({ code: 'custom', message: 'a text part has `text` and no `source`' });
    if (p.type !== 'text' && (p.source == null || p.text != null))
      ctx.addIssue({ code: 'custom', message: `a ${p.type} part has a \`source\` and no \`text\`` });
  });
export type ContentPart = z.infer<typeof ContentPart>;

const Content = z.union([z.string(), z.array(ContentPart)]);

const ToolCall = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  extra: Extra,
});

const SubagentRef = z
  .strictObject({
    trajectory_id: z.string().nullish(),
    session_id: z.string().nullish(),
    trajectory_path: z.string().nullish(),
    extra: Extra,
  })
  .refine((r) => r.trajectory_id != null || r.trajectory_path != null, 'a subagent reference sets trajectory_id or trajectory_path');

const ObservationResult = z.strictObject({
  source_call_id: z.string().nullish(),
  content: Content.nullish(),
  subagent_trajectory_ref: z.array(SubagentRef).nullish(),
  extra: Extra,
});

const Metrics = z.strictObject({
  prompt_tokens: z.number().int().nullish(),
  completion_tokens: z.number().int().nullish(),
  cached_tokens: z.number().int().nullish(),
  cost_usd: z.number().nullish(),
  prompt_token_ids: z.array(z.number().int()).nullish(),
  completion_token_ids: z.array(z.number().int()).nullish(),
  logprobs: z.array(z.number()).nullish(),
  extra: Extra,
});

const AGENT_ONLY = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;

export const Step = z
  .strictObject({
    step_id: z.number().int().min(1),
    timestamp: z
      .string()
      .refine((t) => !Number.isNaN(Date.parse(t)), 'expected an ISO 8601 timestamp')
      .nullish(),
    source: z.enum(['system', 'user', 'agent']),
    model_name: z.string().nullish(),
    reasoning_effort: z.union([z.string(), z.number()]).nullish(),
    message: Content,
    reasoning_content: z.string().nullish(),
    tool_calls: z.array(ToolCall).nullish(),
    observation: z.strictObject({ results: z.array(ObservationResult) }).nullish(),
    metrics: Metrics.nullish(),
    is_copied_context: z.boolean().nullish(),
    llm_call_count: z.number().int().min(0).nullish(),
    extra: Extra,
  })
  .superRefine((s, ctx) => {
    if (s.source !== 'agent')
      for (const f of AGENT_ONLY)
        if (s[f] != null) ctx.addIssue({ code: 'custom', path: [f], message: `only an agent step has it (source is ${s.source})` });
    if (s.source === 'agent' && s.llm_call_count === 0)
      for (const f of ['metrics', 'reasoning_content'] as const)
        if (s[f] != null) ctx.addIssue({ code: 'custom', path: [f], message: 'absent when llm_call_count is 0' });
    const calls = new Set((s.tool_calls ?? []).map((c) => c.tool_call_id));
    for (const [i, r] of (s.observation?.results ?? []).entries())
      if (r.source_call_id != null && !calls.has(r.source_call_id))
        ctx.addIssue({
          code: 'custom',
          path: ['observation', 'results', i, 'source_call_id'],
          message: `names ${r.source_call_id}, not a tool call of step ${s.step_id}`,
        });
  });
export type Step = z.infer<typeof Step>;

export const AgentInfo = z.strictObject({
  name: z.string(),
  version: z.string(),
  model_name: z.string().nullish(),
  tool_definitions: z.array(z.record(z.string(), z.unknown())).nullish(),
  extra: Extra,
});
export type AgentInfo = z.infer<typeof AgentInfo>;

export const FinalMetrics = z.strictObject({
  total_prompt_tokens: z.number().int().nullish(),
  total_completion_tokens: z.number().int().nullish(),
  total_cached_tokens: z.number().int().nullish(),
  total_cost_usd: z.number().nullish(),
  total_steps: z.number().int().min(0).nullish(),
  extra: Extra,
});
export type FinalMetrics = z.infer<typeof FinalMetrics>;

/** The document's fields besides its steps (read as they stream past; `steps` is read one step at a time). */
export const TRAJECTORY_HEAD_FIELDS = {
  schema_version: z.enum(ATIF_VERSIONS),
  session_id: z.string().nullish(),
  trajectory_id: z.string().nullish(),
  agent: AgentInfo,
  notes: z.string().nullish(),
  final_metrics: FinalMetrics.nullish(),
  continued_trajectory_ref: z.string().nullish(),
  extra: Extra,
  subagent_trajectories: z.array(z.unknown()).nullish(),
} as const;

/** The fields a trajectory must have (`schema_version` has a default in Harbor's model). */
export const REQUIRED_TRAJECTORY_FIELDS = ['agent', 'steps'] as const;

/** Step number `index` (from 0) read against the schema and its place (numbered `index + 1`), or the problem. */
export function readStep(value: unknown, index: number): { step: Step } | { problem: string } {
  const r = Step.safeParse(value);
  if (!r.success) return { problem: `steps[${index}]: ${issueText(r.error)}` };
  if (r.data.step_id !== index + 1)
    return { problem: `steps[${index}].step_id: expected ${index + 1} (sequential from 1), got ${r.data.step_id}` };
  return { step: r.data };
}

/** A zod error in one line: each issue's path and message. */
export function issueText(e: z.ZodError): string {
  return e.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');
}
