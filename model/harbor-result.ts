/** zod schemas for the Harbor (0.22–0.25) JSON files vero-harbor reads (reference/harbor.md §3). */
import { z } from 'zod';

/** Trial timestamps end in `Z`; job-level and pre-0.21 ones are naive. Both parse; naive ones are read as UTC. */
export function parseHarborTime(value: string | null | undefined): number | null {
  if (!value) return null;
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/.test(value);
  const ms = Date.parse(hasZone ? value : `${value}Z`);
  return Number.isNaN(ms) ? null : ms;
}

const timestamp = z.string().nullable().optional();

export const ExceptionInfo = z.looseObject({
  exception_type: z.string(),
  exception_message: z.string().nullable().optional(),
  exception_traceback: z.string().nullable().optional(),
  occurred_at: timestamp,
});

export const TaskId = z.union([
  z.looseObject({ path: z.string() }),
  z.looseObject({ org: z.string(), name: z.string(), ref: z.string().nullable().optional() }),
]);

/** The fields of `TrialResult` that collation uses; other fields are kept but not checked. */
export const TrialResult = z.looseObject({
  id: z.string().optional(),
  task_name: z.string(),
  trial_name: z.string(),
  task_id: TaskId.optional(),
  source: z.string().nullable().optional(),
  config: z.looseObject({ task: z.looseObject({ path: z.string().nullable().optional() }).optional() }).optional(),
  verifier_result: z
    .object({ rewards: z.record(z.string(), z.number()).nullable().optional() })
    .loose()
    .nullable()
    .optional(),
  exception_info: ExceptionInfo.nullable().optional(),
  agent_result: z
    .looseObject({
      cost_usd: z.number().nullable().optional(),
      n_input_tokens: z.number().nullable().optional(),
      n_output_tokens: z.number().nullable().optional(),
      n_cache_tokens: z.number().nullable().optional(),
    })
    .nullable()
    .optional(),
  started_at: timestamp,
  finished_at: timestamp,
});
export type TrialResult = z.infer<typeof TrialResult>;

/** The job's `lock.json` (schema 3 in Harbor 0.25): which Harbor ran the job. */
export const JobLock = z.looseObject({
  schema_version: z.number().optional(),
  harbor: z.looseObject({ version: z.string() }).optional(),
});

/**
 * The name a trial answers to in `-i` filters and trial dir names: the task dir basename for local and git
 * tasks, `org/name` for package tasks. `TrialResult.task_name` can differ (it is `[task].name`).
 */
export function trialTaskKey(trial: TrialResult): string {
  const id = trial.task_id as { path?: string; org?: string; name?: string } | undefined;
  const p = id?.path ?? trial.config?.task?.path;
  if (p) {
    // POSIX paths keep a backslash as part of a name (`a\b` is one dir); only a Windows path splits on it.
    const windows = /^[A-Za-z]:\\/.test(p);
    return p
      .replace(windows ? /[/\\]+$/ : /\/+$/, '')
      .split(windows ? /[/\\]/ : '/')
      .at(-1)!;
  }
  if (id?.org && id.name) return `${id.org}/${id.name}`;
  return trial.task_name;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const optStr = (v: unknown) => v === undefined || v === null || typeof v === 'string';
const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v); // zod 4's z.number() is finite
const optNum = (v: unknown) => v === undefined || v === null || num(v);

/**
 * The hot path of collation: whether `json` satisfies `TrialResult` (the fields vero reads, nothing else),
 * checked without building zod's copy of every result. Agrees with `TrialResult.safeParse(json).success`
 * (test/unit/collate.test.ts); zod still explains the failures.
 */
export function isTrialResult(json: unknown): json is TrialResult {
  if (!isObj(json) || typeof json.task_name !== 'string' || typeof json.trial_name !== 'string') return false;
  if (json.id !== undefined && typeof json.id !== 'string') return false;
  const id = json.task_id;
  if (
    id !== undefined &&
    !(isObj(id) && (typeof id.path === 'string' || (typeof id.org === 'string' && typeof id.name === 'string' && optStr(id.ref))))
  )
    return false;
  if (json.source !== undefined && !optStr(json.source)) return false;
  const config = json.config;
  if (config !== undefined && !(isObj(config) && (config.task === undefined || (isObj(config.task) && optStr(config.task.path)))))
    return false;
  const vr = json.verifier_result;
  if (vr !== undefined && vr !== null) {
    if (!isObj(vr)) return false;
    const rw = vr.rewards;
    if (rw !== undefined && rw !== null && !(isObj(rw) && Object.values(rw).every(num))) return false;
  }
  const ex = json.exception_info;
  if (ex !== undefined && ex !== null) {
    if (!isObj(ex) || typeof ex.exception_type !== 'string') return false;
    if (!optStr(ex.exception_message) || !optStr(ex.exception_traceback) || !optStr(ex.occurred_at)) return false;
  }
  const ar = json.agent_result;
  if (ar !== undefined && ar !== null) {
    if (!isObj(ar)) return false;
    if (!optNum(ar.cost_usd) || !optNum(ar.n_input_tokens) || !optNum(ar.n_output_tokens) || !optNum(ar.n_cache_tokens)) return false;
  }
  return optStr(json.started_at) && optStr(json.finished_at);
}
