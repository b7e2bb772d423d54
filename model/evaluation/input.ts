/**
 * The evaluation workflow's input (evaluateCandidate): the candidate, the tasks and the settings, and what a run
 * hands the next when it continues as new. Imported by workflow code: zod only, no I/O.
 *
 * Words (field names are recorded in workflow histories, so they stay as they are):
 * - `candidate`: the candidate's full commit sha (EvalInput, ChunkInput, CandidateResult); `candidateRef`: what
 *   the user asked for (a tag, a branch, a short sha). PrepareCandidateInput.candidate is that ref, before it
 *   is resolved.
 * - `CandidateSource`: where a worker checks the candidate out from (repo, commit, home); `worktree`: the
 *   checkout's path on a worker.
 * - Mode A is the `evaluateSamples` workflow (inference + trusted scorer, activity `runModeA`); Mode B is an
 *   evaluation of Harbor tasks (`evaluateCandidate`).
 * - *build*: `vero build` turns a build.yaml into a Harbor task dir (compiler/); the TypeScript names say build
 *   (`buildTask`, `buildTaskDir`, `BuildTaskInput`, `BuildResult`); only the activity keeps its recorded name,
 *   `compileTaskDir`.
 */
import { z } from 'zod';
import { HarborSection } from '../harbor/config';
import { SpendCap } from './spend-cap';
import { PauseState } from './pause-state';
import { QueuedRetry, RetryOf } from './retry';

const ResolvedSource = z.strictObject({
  path: z.string().optional(),
  dataset: z.string().optional(),
  registry_path: z.string().optional(),
});

export const EvalSettings = z.strictObject({
  harbor: HarborSection,
  source: ResolvedSource,
  rewardKey: z.string().nullable(),
  aggregate: z.enum(['best', 'mean']),
  errorRateThreshold: z.number().min(0).max(1),
  concurrency: z.number().int().min(1),
  taskTimeoutSec: z.number().positive(),
  taskAttempts: z.number().int().min(1),
  heartbeatTimeoutSec: z.number().positive(),
  chunkSize: z.number().int().min(1),
  /** Chunks per run of the parent before it continues as new (model/evaluation/history-bounds.ts); absent: by concurrency. */
  chunksPerRun: z.number().int().min(1).optional(),
  /**
   * How long a stopped harbor gets to tear its trials down (SIGTERM, then SIGKILL of the group and removal of
   * what the trials left in Docker). Optional so evaluations started before it existed replay; default 60 s.
   */
  stopGraceSec: z.number().positive().optional(),
  /**
   * How many tasks of a chunk may be tearing down at once after their harbors did their work, beside
   * `concurrency` running ones (model/evaluation/lane-teardown.ts). Absent: the concurrency; 0: a task keeps its lane until its
   * harbor exits.
   */
  teardownConcurrency: z.number().int().min(0).optional(),
  /** Run `harbor run --dry-run` once before the tasks (Harbor ≥ 0.25). Absent means yes. */
  preflight: z.boolean().optional(),
  /**
   * Isolation of the candidate's harness (the eval sidecar sets these): run harbor as this OS user, with only
   * PATH/HOME/LANG plus `harbor.env`, the named variables of this process's environment, and the variables of
   * `envFile` (a trusted-side JSON file, e.g. the gateway's scoped token: values that must not enter history).
   * `runAs` null: harbor runs as this process's user (no harness isolation). `taskServicesUpstream`: the OpenAI
   * variables name the real upstream (its key read from this process's environment by the variable's name), and the
   * gateway's go to VERO_AGENT_INFERENCE_API_KEY/VERO_AGENT_INFERENCE_BASE_URL (harbor/isolation.ts).
   */
  isolation: z
    .strictObject({
      runAs: z.string().nullable(),
      passEnv: z.array(z.string()),
      envFile: z.string().optional(),
      taskServicesUpstream: z.strictObject({ keyEnv: z.string(), baseUrl: z.string() }).optional(),
    })
    .optional(),
  /** Spend caps (model/evaluation/spend-cap.ts); absent: none (and in histories recorded before they existed). */
  spendCap: SpendCap.optional(),
});
export type EvalSettings = z.infer<typeof EvalSettings>;

export const EvalInput = z.strictObject({
  /** The workflow id (also the result file's name). */
  evalId: z.string().min(1),
  /** The candidate's full commit sha, resolved by the client. */
  candidate: z.string().regex(/^[0-9a-f]{40}$/, 'expected a full 40-hex commit sha'),
  /** What the user asked for (a tag, a short sha), for display. */
  candidateRef: z.string(),
  agentRepo: z.string().min(1),
  home: z.string().min(1),
  tasks: z.array(z.string().min(1)).min(1),
  configDigest: z.string(),
  settings: EvalSettings,
  /** Dirs of the dataset that are not Harbor tasks, with the reason (shown, never dropped silently). */
  skippedDirs: z.array(z.strictObject({ dir: z.string(), reason: z.string() })).optional(),
  /** A run of `vero retry`: `tasks` are the ones run again, merged into this result file (model/evaluation/retry.ts). */
  retryOf: RetryOf.optional(),
});
export type EvalInput = z.infer<typeof EvalInput>;

/**
 * What a run of the evaluation workflow hands to the next when it continues as new (model/evaluation/history-bounds.ts):
 * the candidate as prepared, the run dir of the first run (its chunk files), and the chunks done so far.
 */
export const Continuation = z.strictObject({
  commit: z.string(),
  worktree: z.string(),
  runDir: z.string(),
  startedAt: z.string(),
  /** The first chunk this run starts; the ones before it are done. */
  nextChunk: z.number().int().min(1),
  done: z.strictObject({ done: z.number(), scored: z.number(), errors: z.number(), scoreSum: z.number(), notRun: z.number().optional() }),
  /** What the evaluation's finished tasks spent so far (a spend-capped evaluation). */
  spent: z.strictObject({ costUsd: z.number(), tokens: z.number(), unmetered: z.number() }).optional(),
  /** The concurrency in force (it may have been changed by `vero set-concurrency`). */
  concurrency: z.number().int().min(1).optional(),
  /** Set while the evaluation is paused (`vero pause`): the next run starts paused. */
  paused: PauseState.optional(),
  /** A retry queued while it runs (`vero retry` on a running evaluation): the last run carries it out. */
  retry: QueuedRetry.optional(),
});
export type Continuation = z.infer<typeof Continuation>;
