/**
 * The shape of every `vero … --json` output, one schema per command: camelCase throughout, one name per field
 * across commands (`startedAt`/`finishedAt`, `nTasks` for a count, `tasks` for rows). The JSON Schema files
 * shipped in `schemas/` are generated from these (cli/json-schemas.ts, `vero schema COMMAND`), and a test
 * validates each command's real output against its file. Fields a later version adds are optional here.
 */
import { z } from 'zod';
import { EvalSettings } from './evaluation/input';

const num = z.number();
const nullableNum = num.nullable();
const isoTime = z.string().describe('ISO 8601 UTC time');

// One task's row: its schema is the stored result's (model/evaluation/task-result.ts).
import { TaskRowJson, UsageJson } from './evaluation/task-result';
import { SpendJson, SpendReportJson } from './evaluation/spend-cap';

const Interval = z.tuple([num, num]);

const UncertaintyJson = z.strictObject({ n: z.number().int(), mean: num, stdErr: nullableNum, ci95: Interval.nullable() });
/** What k attempts per task say (model/race/uncertainty.ts AttemptStats). */
export const AttemptsJson = z.strictObject({
  k: z.number().int(),
  passAtK: num,
  passHatK: num,
  /** Mean over tasks of the sample standard deviation of its trials' rewards. */
  withinTaskSd: num,
  /** Tasks the figures are over. */
  nTasks: z.number().int(),
});
const SkippedDir = z.strictObject({ dir: z.string(), reason: z.string() });

/** An evaluation's result (`vero results ID`, `start-eval --wait`), as the result file holds it (CandidateResult). */
export const CandidateResultJson = z.strictObject({
  evalId: z.string(),
  candidate: z.string().describe('the full commit sha'),
  candidateRef: z.string().describe('what the user asked for'),
  /** completed; failed (error rate ≥ threshold); budget_exhausted (a spend cap kept tasks from running). */
  status: z.enum(['completed', 'failed', 'budget_exhausted']),
  /** Mean over the tasks that ran (all of them unless a spend cap stopped it: see nRun), errors counted as 0. */
  score: num.describe('mean over the tasks that ran, errors counted as 0'),
  /** Mean over scored tasks only; null when none scored. */
  scoreOfScored: nullableNum,
  /** The score's standard error and 95% interval over tasks (model/race/uncertainty.ts); absent in older results. */
  uncertainty: UncertaintyJson.optional(),
  /** With k ≥ 2 trials per task: pass@k, pass^k and the within-task spread (model/race/uncertainty.ts). */
  attempts: AttemptsJson.nullable().optional(),
  errorsCountedAsZero: z.literal(true),
  nTasks: z.number().int(),
  nScored: z.number().int(),
  nErrors: z.number().int(),
  errorRate: num,
  errorRateThreshold: num,
  configDigest: z.string(),
  resultFile: z.string(),
  /** Per-task results, inline up to INLINE_TASK_LIMIT tasks; read resultFile beyond that. */
  tasks: z.array(TaskRowJson).nullable().describe('null beyond 1,000 tasks: read resultFile'),
  startedAt: isoTime,
  finishedAt: isoTime,
  /** Cost and tokens summed over all tasks. */
  usage: UsageJson.optional(),
  /** The Harbor versions that ran the tasks (one, normally). */
  harborVersions: z.array(z.string()).optional(),
  /** Absent when none. */
  nInvalidTrials: z.number().int().optional().describe("trials over all tasks whose reward Harbor's error policy marks not valid"),
  /** Dataset dirs that are not tasks, with the reason. */
  skippedDirs: z.array(SkippedDir).optional(),
  /** The spend caps and what was spent, when a cap was set (model/evaluation/spend-cap.ts). */
  spend: SpendReportJson.optional(),
  /** Tasks that ran (nTasks − nNotRun): the score's, errorRate's and uncertainty's denominator. */
  nRun: z.number().int().optional(),
  retries: z
    .array(z.strictObject({ at: isoTime, tasks: z.array(z.string()) }))
    .optional()
    .describe('each vero retry of this evaluation: when it was asked for, and the tasks run again'),
});

/** `start-eval` without `--wait`: what was started or attached to. */
const StartedJson = z.strictObject({
  evalId: z.string(),
  mode: z.enum(['started', 'attached', 'existing']),
  candidate: z.string(),
  nTasks: z.number().int(),
  skippedDirs: z.array(SkippedDir),
  home: z.string().optional().describe("the evaluation's home, when it is not this config's"),
  workers: z.number().int().optional(),
  workerSlots: z.number().int().optional(),
  ui: z.string().nullable(),
});

const StartEvalJson = z.union([StartedJson, CandidateResultJson.extend({ ui: z.string().nullable() })]);

const PrintConfigJson = z.strictObject({
  evalId: z.string(),
  configDigest: z.string(),
  candidate: z.string(),
  candidateRef: z.string(),
  tasks: z.array(z.string()),
  skippedDirs: z.array(SkippedDir),
  settings: EvalSettings,
  config: z.looseObject({}).describe('the resolved vero.yaml (docs/configuration.md)'),
});

/** An evaluation's progress (model/evaluation/progress.ts), as `vero status` reports it. */
export const ProgressJson = z.strictObject({
  total: z.number().int(),
  done: z.number().int(),
  running: z.number().int(),
  tearingDown: z
    .number()
    .int()
    .optional()
    .describe('tasks whose harbors have done their work and are tearing down, their lanes given to other tasks (not in running)'),
  scored: z.number().int(),
  errors: z.number().int(),
  scoreSum: num,
  /** Tasks a spend cap kept from running (counted in `done`, not in `scored` or `errors`). */
  notRun: z.number().int().optional(),
  /** The spend cap reached, in words (model/evaluation/spend-cap.ts), once it is. */
  spendCapReached: z.string().optional(),
  /** `cancelling`: a cancel was received; `running` counts the tasks whose harbors are still being stopped. */
  phase: z
    .enum(['preparing', 'running', 'finalizing', 'done', 'cancelling', 'failed', 'cancelled', 'terminated', 'timed_out'])
    .describe('where a running evaluation is; how a closed one ended'),
  /** The chunk workflow running now (query it for in-chunk progress). */
  currentChunk: z.string().nullable(),
  /** Every chunk workflow running now (chunks overlap under lane grants); supersedes currentChunk. */
  runningChunks: z.array(z.string()).optional(),
  /** The concurrency in force (an evaluation's, after any `vero set-concurrency`). */
  concurrency: z.number().int().optional(),
  stopped: z.number().int().optional().describe('tasks that were running when a closed evaluation stopped'),
  paused: z
    .strictObject({ since: isoTime, stopRunning: z.boolean() })
    .optional()
    .describe('set while the evaluation is paused (vero pause): no task starts until vero resume'),
});

const StatusJson = z.strictObject({
  evalId: z.string(),
  workflowStatus: z.string(),
  startedAt: isoTime,
  finishedAt: isoTime.nullable(),
  progress: ProgressJson.nullable(),
  notes: z
    .array(z.string())
    .describe('why a running evaluation may not be moving: activities retrying after a failure (with it), no worker polling'),
  ui: z.string().nullable(),
});

const PartialResultsJson = z.strictObject({
  workflowStatus: z.string(),
  partial: z.literal(true),
  nTasks: z.number().int(),
  nWithResults: z.number().int(),
  tasks: z.array(TaskRowJson),
  pending: z.array(z.string()),
});

const ResultsJson = z.union([CandidateResultJson, PartialResultsJson]);

const ListRowJson = z.strictObject({
  evalId: z.string(),
  candidate: z.string().nullable(),
  candidateRef: z
    .string()
    .nullable()
    .describe('the ref it was started as (tag, branch, HEAD); null for evaluations started before refs were kept'),
  status: z.string(),
  score: nullableNum,
  costUsd: nullableNum,
  workflowStatus: z.string(),
  startedAt: isoTime,
  finishedAt: isoTime.nullable(),
});
const ListJson = z.array(ListRowJson);

/** What a ranking ranked by: its metric and direction, what the metric is, how ties go, and the constraints it checks. */
const RankedByJson = z
  .strictObject({
    metric: z.string(),
    direction: z.enum(['maximize', 'minimize']),
    meaning: z.string(),
    ties: z.string(),
    constraints: z.array(z.string()).describe('`metric operator value` each; a candidate breaking one is not ranked (none here)'),
  })
  .describe('what the ranking ranked by');

const BestJson = CandidateResultJson.omit({ tasks: true }).extend({
  rankedBy: RankedByJson,
  runnerUp: z.strictObject({ evalId: z.string(), candidateRef: z.string(), score: num, separable: z.boolean() }).nullable(),
});

const EvalRef = z.strictObject({ evalId: z.string(), candidate: z.string(), candidateRef: z.string() });
/** `vero compare`: the two evaluations, and their paired comparison (model/race/paired-comparison.ts) from `n` on. */
export const CompareJson = z.strictObject({
  a: EvalRef,
  b: EvalRef,
  rankedBy: RankedByJson,
  harborVersions: z
    .strictObject({ a: z.array(z.string()), b: z.array(z.string()), differ: z.boolean() })
    .optional()
    .describe(
      'the Harbor versions each evaluation ran on (from its jobs); differ: they are not the same, so the scores may not be comparable',
    ),
  /** Tasks both evaluations scored, in task order. */
  n: z.number().int(),
  /** Per shared task: its scores (errors counted as 0, as the evaluation's score counts them) and b − a. */
  deltas: z.array(z.strictObject({ task: z.string(), a: num, b: num, delta: num })),
  onlyInA: z.array(z.string()),
  onlyInB: z.array(z.string()),
  meanA: num,
  meanB: num,
  /** mean(b − a). */
  meanDelta: num,
  /** Paired bootstrap percentile interval of the mean delta; null with fewer than 2 shared tasks. */
  ci95: Interval.nullable(),
  bootstrap: z.strictObject({ resamples: z.number().int(), seed: z.string() }),
  /** Exact two-sided McNemar (binomial) test on the discordant pairs, pass = score ≥ passThreshold. */
  mcnemar: z.strictObject({ passThreshold: num, aOnly: z.number().int(), bOnly: z.number().int(), pValue: num }),
  /** Tasks B passes and A fails, and the other way. */
  flippedToPass: z.array(z.string()),
  flippedToFail: z.array(z.string()),
  verdict: z.enum(['B better', 'A better', 'not resolved']),
  /** Shared tasks needed for a delta of this size to be resolved at 95% (normal approximation); null if 0. */
  tasksToResolve: z.number().int().nullable(),
  /** One line a person can act on. */
  summary: z.string(),
});

const RaceBoundJson = z.strictObject({ meanDiff: num, lower: num, upper: num });
/** A race's state while it runs (`raceCandidates`' query) and, with `results`, its result (model/race/types.ts). */
export const RaceJson = z.strictObject({
  raceId: z.string(),
  phase: z.enum(['preparing', 'racing', 'finalizing', 'done']),
  order: z.array(z.string()).describe("the tasks in the race's shared, seeded order"),
  sampling: z
    .strictObject({
      kind: z.literal('history-weighted'),
      earlierEvaluations: z.number().int(),
      relativeProbability: z.array(num),
    })
    .optional()
    .describe("present when tasks were drawn by earlier evaluations' disagreement: each draw's probability relative to uniform"),
  seed: z.string(),
  confidence: num,
  margin: num,
  decidedUpTo: z.number().int().describe('shared tasks behind the last decision'),
  running: z.number().int(),
  candidates: z.array(
    z.strictObject({
      candidateRef: z.string(),
      candidate: z.string(),
      evalId: z.string().describe('its partial evaluation: vero results / vero compare read it'),
      status: z.enum(['racing', 'eliminated', 'winner', 'finished']),
      /** Tasks with a row in the race (run now, or reused). */
      tasksRun: z.number().int(),
      reused: z.number().int().describe('tasks whose stored row (same commit, same config digest) was reused, not run'),
      /** Harbor trials run by this race (n_attempts per task, retries included as Harbor reported them). */
      trialRuns: z.number().int(),
      costUsd: num,
      /** Running mean over the shared tasks decided so far. */
      mean: num,
      meanCs: Interval.describe("the running mean's confidence sequence (at 1 − (1 − confidence)/K)"),
      vsLeader: RaceBoundJson.nullable().describe('mean(this − leader) and its confidence sequence; null for the leader'),
      /** After how many shared tasks it was eliminated, and why. */
      eliminatedAt: z.number().int().nullable(),
      why: z.string().nullable(),
      /** Each decision point's interval of mean(this − leader): what `vero race --json` draws from. */
      path: z.array(RaceBoundJson.extend({ t: z.number().int() })),
    }),
  ),
  decisions: z.array(
    // One decision point: what the statistics said and what was done (t: shared tasks of the race's order behind it).
    z.strictObject({
      t: z.number().int(),
      leader: z.string(),
      eliminated: z.array(z.strictObject({ candidateRef: z.string(), meanDiff: num, upper: num })),
      stop: z.enum(['one-left', 'within-margin']).nullable(),
    }),
  ),
  stopReason: z.enum(['one-left', 'within-margin', 'tasks-exhausted', 'spend-cap']).nullable(),
  winner: z.string().nullable(),
  /** In words: the winner and how sure. */
  verdict: z.string().nullable(),
  spent: z.strictObject({ trialRuns: z.number().int(), costUsd: num, taskRuns: z.number().int() }),
  /** Scoring every candidate on every task: task runs and trials; cost extrapolated from the mean per task. */
  fullEvaluation: z.strictObject({ taskRuns: z.number().int(), trialRuns: z.number().int(), costUsd: nullableNum }),
  /** Each candidate's evaluation (its rows: run here or reused): `vero results EVAL_ID` shows it, marked partial. */
  results: z.array(
    z.strictObject({
      evalId: z.string(),
      candidateRef: z.string(),
      status: z.enum(['completed', 'failed', 'budget_exhausted']),
      score: num,
      nTasks: z.number().int(),
      nRun: z.number().int().optional(),
      resultFile: z.string(),
    }),
  ),
});

const SetConcurrencyJson = z.strictObject({ evalId: z.string(), previous: z.number().int(), concurrency: z.number().int() });

const UiJson = z.strictObject({
  url: z.string().describe("the Web UI's page: the list of evaluations and races, or one evaluation's"),
  query: z.string().nullable().describe('the visibility query the list is filtered by (null for one evaluation)'),
});

const PauseJson = z.strictObject({
  evalId: z.string(),
  paused: z.boolean().describe('whether the evaluation is paused now'),
  since: isoTime.nullable().describe('when it was paused (null: not paused)'),
  stopRunning: z.boolean().describe('whether the tasks running at the pause were stopped (they run again on resume)'),
  changed: z.boolean().describe('whether this call changed anything (false: it was already paused, or not paused)'),
});

const RetryStartedJson = z.strictObject({
  evalId: z.string(),
  runId: z
    .string()
    .nullable()
    .describe("the new run of the evaluation's workflow that runs the chosen tasks (null: queued in a running evaluation)"),
  previousRunId: z.string().describe('the run whose rows it replaces'),
  tasks: z.array(z.string()).describe('the tasks run again (queued: the named ones; with errors, its error rows at the end too)'),
  requestedAt: isoTime.describe("when the retry was asked for: the retried rows' retried.at"),
  queued: z
    .strictObject({ errors: z.boolean().describe('its error rows at the end are retried too') })
    .optional()
    .describe('a running evaluation: the retry is queued and runs once every task has finished, as its next run'),
});
const RetryJson = z.union([RetryStartedJson, RetryStartedJson.extend({ result: CandidateResultJson })]);

const SpendPoolJson = z.strictObject({
  name: z.string(),
  maxCostUsd: nullableNum,
  maxTokens: nullableNum,
  spent: SpendJson,
  reached: z.string().nullable(),
  members: z.array(z.string()),
  spentBy: z.record(z.string(), z.strictObject({ costUsd: num, tokens: num })),
});

const CleanJson = z.strictObject({
  home: z.string(),
  olderThanSec: num,
  removed: z.boolean(),
  bytes: z.number().int(),
  items: z.array(
    z.strictObject({ path: z.string(), kind: z.enum(['run dir', 'result', 'worktree']), reason: z.string(), bytes: z.number().int() }),
  ),
  unknown: z.array(z.string()).describe('evaluations in the home this server does not know, left (no --forgotten)'),
  left: z
    .array(z.strictObject({ path: z.string(), reason: z.string() }))
    .describe('with --yes: items checked again right before removal and left (in use since the plan, or not removable)'),
});

const TrialsJson = z.strictObject({
  tasks: z.array(TaskRowJson),
  skippedJobDirs: z
    .array(z.strictObject({ jobDir: z.string(), reason: z.string() }))
    .optional()
    .describe('job dirs without any result.json (crashed, empty or still running), with why; absent when none'),
});

const JobsJson = z.strictObject({
  evalId: z.string(),
  home: z.string(),
  jobs: z.array(
    z.strictObject({
      task: z.string().describe('the job name: the task (dir basename)'),
      runId: z.string().describe("the evaluation workflow's run that ran it"),
      jobDir: z.string().describe('the Harbor job dir (harbor view DIR)'),
      harborLog: z.string().nullable().describe("harbor's output for the job, when it is there"),
      nTrials: z.number().int(),
      nFinishedTrials: z.number().int().describe('trial dirs with a result.json'),
      finished: z.boolean().describe("whether Harbor wrote the job's result.json with a finish time"),
      updatedAt: z.string().describe('when the job last changed, ISO'),
      latest: z.boolean().describe("the task's latest job, the one its row counts (false: a later run replaced it)"),
    }),
  ),
});

const DemoJson = z.strictObject({ results: z.array(CandidateResultJson), best: z.string(), ui: z.string().nullable() });

const BuildJson = z.strictObject({
  outDir: z.string(),
  taskName: z.string(),
  mode: z.enum(['A', 'B']),
  baseCommit: z.string(),
  sourceCommit: z.string(),
  buildDigest: z
    .string()
    .optional()
    .describe("the build's digest: a rescued session of this task records it, and `vero run --resume-from` must match it"),
  files: z.number().int(),
  warnings: z.array(z.string()),
  gateway: z.boolean(),
  workflowId: z.string().nullable().optional().describe('the buildTask workflow, when built on a worker'),
});

/** The sidecar's answers as `vero eval` / `vero budget` print them: its API's fields, camelCased. */
/** `vero eval` of an evaluation still running at its bound: its id, how far it is, and the command to wait for it. */
const SidecarEvalRunningJson = z.looseObject({
  evalId: z.string(),
  status: z.literal('running'),
  split: z.string(),
  commit: z.string(),
  nSamples: z.number().int(),
  elapsedSec: z.number(),
  progress: z.looseObject({ done: z.number().int(), total: z.number().int(), errors: z.number().int() }).optional(),
  next: z.string().describe('vero eval wait <evalId>'),
});
const SidecarEvalResultJson = z.looseObject({
  evalId: z.string().optional(),
  commit: z.string(),
  split: z.string(),
  nSamples: z.number().int(),
  nErrors: z.number().int(),
  meanScore: num,
  resultPath: z.string().nullable(),
  budgetRemaining: z.unknown(),
  invalidReason: z.string().optional(),
  attemptHealth: z
    .looseObject({
      nAttempts: z.number().int(),
      starvedAttemptRate: num,
      deadInfraAttemptRate: num,
      unmeasuredAttemptRate: num,
      deflationFactor: nullableNum,
      warning: z.string().optional(),
    })
    .optional(),
});
const SidecarEvalJson = z.union([SidecarEvalResultJson, SidecarEvalRunningJson]);
const SidecarBudgetJson = z.looseObject({
  splits: z.array(
    z.looseObject({
      split: z.string(),
      access: z.string(),
      agentEvaluable: z.boolean(),
      budget: z.record(z.string(), nullableNum).nullable(),
    }),
  ),
  gateway: z.unknown().optional(),
});

/** `vero query --json`: the statement's columns and rows (arrays in column order), and whether rows were cut. */
const QueryJson = z.strictObject({
  columns: z.array(z.string()),
  rows: z.array(z.array(z.union([z.string(), z.number(), z.null()]))),
  rowCount: z.number().int(),
  truncated: z.boolean(),
  maxRows: z.number().int(),
  elapsedMs: z.number(),
});

/** Every command with `--json`, and the schema of what it prints. */
export const CLI_JSON_SCHEMAS = {
  'start-eval': StartEvalJson,
  'start-eval--print-config': PrintConfigJson,
  status: StatusJson,
  results: ResultsJson,
  list: ListJson,
  best: BestJson,
  compare: CompareJson,
  race: RaceJson,
  'set-concurrency': SetConcurrencyJson,
  pause: PauseJson,
  resume: PauseJson,
  retry: RetryJson,
  'spend-pool': SpendPoolJson,
  clean: CleanJson,
  trials: TrialsJson,
  jobs: JobsJson,
  demo: DemoJson,
  build: BuildJson,
  eval: SidecarEvalJson,
  budget: SidecarBudgetJson,
  query: QueryJson,
  ui: UiJson,
} as const;
export type CliJsonCommand = keyof typeof CLI_JSON_SCHEMAS;
