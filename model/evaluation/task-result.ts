/**
 * One task's row in an evaluation's result: scored, an error (never a silent 0), or not run (a spend cap). One
 * schema, TaskRowJson, from which every spelling of the row derives: the `--json` row (model/cli-json.ts), the
 * stored result (TaskResult), the collated row of `vero trials` (CollatedRow, harbor/collate.ts) and a task's
 * score (TaskScore, model/harbor/trial-ranking.ts). A new result field is added here, once.
 */
import { z } from 'zod';

const num = z.number();
const nullableNum = num.nullable();
const isoTime = z.string().describe('ISO 8601 UTC time');

export const UsageJson = z.strictObject({
  costUsd: nullableNum,
  inputTokens: nullableNum,
  outputTokens: nullableNum,
  cacheTokens: nullableNum,
});

/** Scored, an error (counted as 0), or not run (a spend cap stopped the evaluation first; not counted). */
const TaskStatusJson = z.enum(['scored', 'error', 'not_run']);

/**
 * One task's row, as `vero results`, `start-eval --wait`, `vero trials` and `vero demo` print it. The fields only
 * an evaluation run knows (`runs`, `timedOut`, `notes`, `harborVersion`) are absent from `vero trials` rows.
 */
export const TaskRowJson = z.strictObject({
  task: z.string(),
  status: TaskStatusJson,
  score: nullableNum.describe('null unless scored: an error is never a silent 0'),
  metrics: z.record(z.string(), num),
  trial: z.string().nullable().describe('the chosen trial'),
  taskName: z.string().nullable(),
  nTrials: z.number().int(),
  runs: z.number().int().optional().describe('harbor runs (Temporal activity attempts) the task took'),
  exceptions: z.array(z.string()),
  timedOut: z.boolean().optional(),
  jobDir: z.string(),
  error: z.string().nullable(),
  usage: UsageJson.optional(),
  trialRewards: z.array(num).optional(),
  nInvalidTrials: z
    .number()
    .int()
    .optional()
    .describe(
      "trials whose reward Harbor's error policy marks not valid (a model-provider failure, a spent budget, a failed verifier): never scored",
    ),
  invalidReasons: z.array(z.string()).optional().describe('why those trials are not valid: each distinct `ExceptionType (what it is)`'),
  harborVersion: z.string().nullable().optional(),
  notes: z.array(z.string()).optional(),
  retried: z
    .strictObject({
      at: isoTime,
      previous: z.strictObject({ status: TaskStatusJson, score: nullableNum, error: z.string().nullable() }),
    })
    .optional()
    .describe('set on a row vero retry ran again: when it was asked for, and the row it replaced'),
});

/** The fields only an evaluation run knows: absent from a collated (`vero trials`) row. */
const RUN_ONLY = { runs: true, timedOut: true, harborVersion: true, notes: true, retried: true } as const;
/** A collated row: the fields collation knows, with those it always reports. */
const CollatedRowSchema = TaskRowJson.omit(RUN_ONLY).required({ usage: true, trialRewards: true });
/** The stored result: a run's row, which knows the harbor runs it took and whether it timed out. */
const TaskResultSchema = TaskRowJson.required({ runs: true, timedOut: true });

/** Cost and tokens as Harbor's trial results report them; null when no trial reported the figure. */
export type Usage = z.infer<typeof UsageJson>;
/** One task's outcome. Small: the job dir holds everything else. */
export type TaskResult = z.infer<typeof TaskResultSchema>;
/** A collated task as `vero trials` prints it: the fields of a row that collation knows. */
export type CollatedRow = z.infer<typeof CollatedRowSchema>;
/** What a retried row (`vero retry`) says about the row it replaced. */
export type RetriedFrom = NonNullable<TaskResult['retried']>;

const ROW_FIELDS = Object.keys(TaskResultSchema.shape) as (keyof TaskResult)[];
/** The collated row's fields, in the row's order. */
export const COLLATED_ROW_FIELDS = Object.keys(CollatedRowSchema.shape) as (keyof CollatedRow)[];

/** `row`'s fields among `fields`, in the row's order (as every row is written); those undefined are left out. */
export function inRowOrder<T extends Partial<TaskResult>>(row: T, fields: readonly (keyof TaskResult)[] = ROW_FIELDS): T {
  return Object.fromEntries(fields.flatMap((k) => (row[k] === undefined ? [] : [[k, row[k]]]))) as T;
}

/** The start of a Mode A row's error when the candidate's inference gave no output for it (its own failure). */
export const NO_INFERENCE_OUTPUT = 'no output from inference';

/** The row of a task whose attempts all failed (timeouts, crashes, no trial with a reward): never a silent 0. */
export function errorRow(task: string, error: string, runs: number, jobDir: string): TaskResult {
  return {
    task,
    status: 'error',
    score: null,
    metrics: {},
    trial: null,
    taskName: null,
    nTrials: 0,
    runs,
    exceptions: [],
    timedOut: false,
    jobDir,
    error,
  };
}

/** The row of a task a spend cap kept from running (or stopped after the grace period): not scored, not an error. */
export function notRunRow(task: string, why: string, jobDir: string): TaskResult {
  return { ...errorRow(task, why, 0, jobDir), status: 'not_run' };
}

/** The score of each task as the evaluation's score counts it (an error is 0). */
export const countedTaskScores = (tasks: TaskResult[]): number[] => tasks.map((t) => (t.status === 'scored' ? (t.score ?? 0) : 0));
