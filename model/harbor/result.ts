/**
 * Harbor's trial results as collation reads them: their type, the check of its hot path, times and task keys. The
 * zod schemas (model/harbor/schemas.ts) explain a file that fails the check, and are loaded only then.
 */
import { KNOWN_RESULT_SCHEMA_VERSIONS, type TrialResult } from './schemas';

export type { TrialResult };

/** Trial timestamps end in `Z`; job-level and pre-0.21 ones are naive. Both parse; naive ones are read as UTC. */
export function parseHarborTime(value: string | null | undefined): number | null {
  if (!value) return null;
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/.test(value);
  const ms = Date.parse(hasZone ? value : `${value}Z`);
  return Number.isNaN(ms) ? null : ms;
}

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
const optBool = (v: unknown) => v === undefined || v === null || typeof v === 'boolean';

/**
 * The hot path of collation: whether `json` satisfies `TrialResult` (the fields vero reads, nothing else),
 * checked without building zod's copy of every result. Agrees with `TrialResult.safeParse(json).success`
 * (test/unit/collate.test.ts); zod still explains the failures.
 */
export function isTrialResult(json: unknown): json is TrialResult {
  if (!isObj(json) || typeof json.task_name !== 'string' || typeof json.trial_name !== 'string') return false;
  if (json.schema_version !== undefined && !KNOWN_RESULT_SCHEMA_VERSIONS.includes(json.schema_version as number)) return false;
  if (!optBool(json.reward_valid)) return false;
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
    const p = ex.policy;
    if (p !== undefined && p !== null && !(isObj(p) && optBool(p.should_retry) && optBool(p.should_grade) && optBool(p.has_valid_reward)))
      return false;
  }
  const ar = json.agent_result;
  if (ar !== undefined && ar !== null) {
    if (!isObj(ar)) return false;
    if (!optNum(ar.cost_usd) || !optNum(ar.n_input_tokens) || !optNum(ar.n_output_tokens) || !optNum(ar.n_cache_tokens)) return false;
  }
  return optStr(json.started_at) && optStr(json.finished_at);
}

/**
 * The fields of a trial result that scoring reads (those `TrialResult` names), as a new small object: collation
 * keeps this rather than the whole parsed file (Harbor's config, phase timings and agent metadata are most of
 * it), so 20,000 results do not live on in memory, and a reader thread can send them cheaply. The tie-break
 * digest is of this too, wherever the trial was read.
 */
export function scoringFields(r: TrialResult): TrialResult {
  const ex = r.exception_info;
  const ar = r.agent_result;
  const vr = r.verifier_result;
  const out: TrialResult = { task_name: r.task_name, trial_name: r.trial_name };
  if (r.schema_version !== undefined) out.schema_version = r.schema_version;
  if (r.reward_valid !== undefined) out.reward_valid = r.reward_valid;
  if (r.id !== undefined) out.id = r.id;
  if (r.task_id !== undefined) out.task_id = r.task_id;
  if (r.source !== undefined) out.source = r.source;
  if (r.config?.task !== undefined) out.config = { task: { path: r.config.task.path } };
  if (vr !== undefined) out.verifier_result = vr === null ? null : { rewards: vr.rewards };
  if (ex !== undefined)
    out.exception_info =
      ex === null
        ? null
        : {
            exception_type: ex.exception_type,
            exception_message: ex.exception_message,
            occurred_at: ex.occurred_at,
            ...(ex.policy !== undefined ? { policy: ex.policy } : {}),
          };
  if (ar !== undefined)
    out.agent_result =
      ar === null
        ? null
        : {
            cost_usd: ar.cost_usd,
            n_input_tokens: ar.n_input_tokens,
            n_output_tokens: ar.n_output_tokens,
            n_cache_tokens: ar.n_cache_tokens,
          };
  if (r.started_at !== undefined) out.started_at = r.started_at;
  if (r.finished_at !== undefined) out.finished_at = r.finished_at;
  return out;
}
