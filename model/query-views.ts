/**
 * The views `vero query` answers SQL over: their names and columns, in one place (docs/query.md documents each
 * column; a unit test keeps the two the same). Pure: client/query-tables.ts fills them, infra/sql-engine.ts runs SQL.
 */

/** An SQLite column type: how the value is stored and compared. */
export type SqlType = 'TEXT' | 'REAL' | 'INTEGER';

export interface ViewColumn {
  name: string;
  type: SqlType;
  doc: string;
}

export interface ViewDef {
  name: QueryViewName;
  doc: string;
  columns: ViewColumn[];
}

export type QueryViewName = 'evaluations' | 'tasks' | 'trials' | 'rewards' | 'errors' | 'spend';

const col = (name: string, type: SqlType, doc: string): ViewColumn => ({ name, type, doc });

/** The same usage columns everywhere cost and tokens are reported (null where no trial reported them). */
const usageColumns = [
  col('cost_usd', 'REAL', "Harbor's cost_usd summed over the trials"),
  col('input_tokens', 'INTEGER', 'input tokens summed over the trials'),
  col('output_tokens', 'INTEGER', 'output tokens summed over the trials'),
  col('cache_tokens', 'INTEGER', 'cache tokens summed over the trials'),
];

export const QUERY_VIEWS: readonly ViewDef[] = [
  {
    name: 'evaluations',
    doc: 'one row per evaluation: from Temporal visibility and its result, or from a result file Temporal no longer has',
    columns: [
      col('eval_id', 'TEXT', 'the workflow id'),
      col('candidate', 'TEXT', "the candidate's full commit sha"),
      col('candidate_ref', 'TEXT', 'what the user asked for (tag, branch, short sha); null until the result says'),
      col('status', 'TEXT', 'completed, failed, budget_exhausted; or the workflow status in lower case while not completed'),
      col('workflow_status', 'TEXT', 'RUNNING, COMPLETED, FAILED, CANCELED, TERMINATED, TIMED_OUT; null for a result file only'),
      col('partial', 'INTEGER', '1 when the rows are those so far (not completed), else 0'),
      col('score', 'REAL', 'the mean over the tasks that ran, errors counted as 0'),
      col('score_of_scored', 'REAL', 'the mean over scored tasks only'),
      col('n_tasks', 'INTEGER', 'tasks in the evaluation'),
      col('n_scored', 'INTEGER', 'tasks with a score'),
      col('n_errors', 'INTEGER', 'tasks that ended in error'),
      col('n_not_run', 'INTEGER', 'tasks a spend cap kept from running'),
      col('error_rate', 'REAL', 'n_errors over the tasks that ran'),
      col('cost_usd', 'REAL', 'cost summed over all tasks'),
      col('config_digest', 'TEXT', 'the digest of tasks, harbor settings and scoring (same digest: comparable scores)'),
      col('started_at', 'TEXT', 'ISO 8601 UTC'),
      col('finished_at', 'TEXT', 'ISO 8601 UTC; null while running'),
      col('result_file', 'TEXT', 'the result file on the host that finalized it'),
      col('source', 'TEXT', "'temporal' or 'file' (a result file under the home that this server does not list)"),
    ],
  },
  {
    name: 'tasks',
    doc: 'one row per task of an evaluation (the rows so far while it runs)',
    columns: [
      col('eval_id', 'TEXT', 'the evaluation'),
      col('task', 'TEXT', 'the task (its dir name)'),
      col('status', 'TEXT', 'scored, error or not_run'),
      col('score', 'REAL', 'the task score; null for an error or not_run row'),
      col('chosen_trial', 'TEXT', 'the trial the score comes from'),
      col('n_trials', 'INTEGER', 'trials Harbor ran for the task'),
      col('runs', 'INTEGER', 'harbor runs (Temporal activity attempts); null for the rows so far'),
      col('error', 'TEXT', 'why the task has no score'),
      col('exceptions', 'TEXT', 'the distinct trial exceptions, as a JSON array of "Type: message"'),
      ...usageColumns,
      col('job_dir', 'TEXT', "the task's Harbor job dir"),
    ],
  },
  {
    name: 'trials',
    doc: "one row per Harbor trial, read from the task's job dir on this host (absent when the job dir is elsewhere)",
    columns: [
      col('eval_id', 'TEXT', 'the evaluation'),
      col('task', 'TEXT', 'the task'),
      col('trial', 'TEXT', "Harbor's trial_name"),
      col('chosen', 'INTEGER', '1 for the trial the task score comes from'),
      col('exception_type', 'TEXT', "the trial's exception type, if any"),
      col('reward_valid', 'INTEGER', "Harbor 0.26's reward_valid (1/0); null where Harbor did not write it"),
      col('started_at', 'TEXT', 'when the trial started'),
      col('finished_at', 'TEXT', 'when the trial finished'),
      col('duration_sec', 'REAL', 'finished_at − started_at'),
      ...usageColumns,
      col('result_file', 'TEXT', "the trial's result.json"),
    ],
  },
  {
    name: 'rewards',
    doc: "one row per reward key of each trial's verifier result",
    columns: [
      col('eval_id', 'TEXT', 'the evaluation'),
      col('task', 'TEXT', 'the task'),
      col('trial', 'TEXT', 'the trial'),
      col('key', 'TEXT', "the reward's name (reward, pass, …)"),
      col('value', 'REAL', 'its value'),
    ],
  },
  {
    name: 'errors',
    doc: "one row per error: a task's error (level 'task') and each trial's exception (level 'trial')",
    columns: [
      col('eval_id', 'TEXT', 'the evaluation'),
      col('task', 'TEXT', 'the task'),
      col('trial', 'TEXT', "the trial; null for a task's error"),
      col('level', 'TEXT', "'task' or 'trial'"),
      col('type', 'TEXT', "the exception type (a trial's), or null"),
      col('message', 'TEXT', 'the message'),
    ],
  },
  {
    name: 'spend',
    doc: 'one row per evaluation: what it spent, its caps and its spend pool',
    columns: [
      col('eval_id', 'TEXT', 'the evaluation'),
      ...usageColumns,
      col('max_cost_usd', 'REAL', 'its execution.max_cost_usd cap'),
      col('max_tokens', 'INTEGER', 'its execution.max_tokens cap'),
      col('spend_pool', 'TEXT', 'its execution.spend_pool'),
      col('cap_reached', 'TEXT', 'the cap reached, in words; null when none was'),
    ],
  },
];

/** A view's rows, each an array in its columns' order. */
export type ViewRows = Record<QueryViewName, (string | number | null)[][]>;

/** A value as SQLite stores it: booleans as 0/1, objects as JSON, undefined as null. */
function sqlValue(v: unknown): string | number | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string') return v;
  if (v instanceof Date) return v.toISOString();
  return JSON.stringify(v);
}

/** A row for `view` from an object keyed by its column names (a missing key is null). */
export function rowOf(view: QueryViewName, values: Record<string, unknown>): (string | number | null)[] {
  const def = QUERY_VIEWS.find((v) => v.name === view)!;
  return def.columns.map((c) => sqlValue(values[c.name]));
}
