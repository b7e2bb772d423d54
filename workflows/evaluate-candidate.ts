/**
 * One candidate evaluation. Durable: after a worker or server crash it resumes from history, and finished
 * tasks are never run again (their activity results are in the history of their chunk).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  ContinueAsNew,
  allHandlersFinished,
  condition,
  executeChild,
  isCancellation,
  makeContinueAsNewFunc,
  setCurrentDetails,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  type WorkflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { PreparedCandidate } from '../model/evaluation/activity-payloads';
import { CandidateResult, INLINE_TASK_LIMIT } from '../model/evaluation/candidate-result';
import { ChunkInput, ChunkSummary } from '../model/evaluation/chunk-payloads';
import { Continuation, EvalInput } from '../model/evaluation/input';
import { newProgress, type Progress, settleFromResult } from '../model/evaluation/progress';
import { type ChunkProgressReport, progressDetails, withReports } from '../model/evaluation/progress-details';
import { chunksPerRun, PARENT_EVENT_BUDGET } from '../model/evaluation/history-bounds';
import { CONFIG_FAILURES, FailureType } from '../model/failures';
import { VeroCandidate, VeroCostUsd, VeroScore, veroStatus } from '../model/evaluation/search-attributes';
import { evaluateChunk } from './evaluate-chunk';
import { carryPause, handlePauseAndResume } from './pause';
import { progressQuery } from './queries';
import { chunkProgressSignal, setConcurrencyUpdate } from './lane-signals';
import { RETRY_RUNNING_PATCH, retryRunningUpdate } from './retry-running';
import { anotherRetryRunning, type QueuedRetry, queuedRetryProblem, queueRetry } from '../model/evaluation/retry';
import { type LanePool, newLanePool, runChunksWithLaneGrants, setPoolConcurrency } from './lane-grants';
import { meterSpend, type SpendMeter } from './spend-meter';
import { stepActivities } from './activity-policy';
import { chunkWorkflowId, homePaths } from '../model/paths';
import { MAX_CONCURRENCY } from '../model/evaluation/config';

const { prepareCandidate, finalizeEvaluation } = stepActivities;

const { preflightHarbor } = proxyActivities<Activities>({
  startToCloseTimeout: '10m',
  heartbeatTimeout: '30s',
  // A Docker engine that is briefly down is retried for about 8 minutes; a config error fails at once.
  retry: {
    maximumAttempts: 10,
    initialInterval: '5s',
    backoffCoefficient: 2,
    maximumInterval: '1m',
    nonRetryableErrorTypes: CONFIG_FAILURES,
  },
});

function invalidInput(what: string, issues: readonly { path: readonly PropertyKey[]; message: string }[]): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `invalid ${what}: ${issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ')}`,
    FailureType.InvalidInput,
  );
}

/** The candidate as this run uses it: prepared by the activity, or carried by the continuation. */
type Prepared = PreparedCandidate;

/** One run of the evaluation workflow: its input, what it continues, and the state its handlers share. */
interface Run {
  input: EvalInput;
  continuation: Continuation | undefined;
  info: WorkflowInfo;
  startedAt: string;
  runDir: string;
  progress: Progress;
  lanes: LanePool;
  summaries: ChunkSummary[];
  /** Decided where the chunks start, by patched('lane-grants'). */
  lanesGranted: boolean | null;
  /** A spend-capped evaluation's meter (workflows/spend-meter.ts). */
  meter: SpendMeter | null;
  /** The last progress report of each running chunk (patched 'chunk-progress-reports'), for the Web UI's details. */
  reports: Map<number, ChunkProgressReport>;
  /** Chunks whose summary is in: a report of theirs that arrives late is dropped. */
  finishedChunks: Set<number>;
  /** Tasks to run again once every task has finished (`vero retry` while it runs: workflows/retry-running.ts). */
  retry: QueuedRetry | null;
}

/** How this run's chunks go: which it starts, whether it continues as new, where the rows travel. */
interface ChunkPlan {
  size: number;
  nChunks: number;
  firstChunk: number;
  endChunk: number;
  continues: boolean;
  inline: boolean;
  chunkInput: (i: number, lanes?: number) => ChunkInput;
}

/**
 * `continuation` is absent when a client starts the evaluation; a run that has started `chunksPerRun` chunks
 * continues as new with it (model/evaluation/history-bounds.ts), so every run's history stays bounded.
 */
export async function evaluateCandidate(rawInput: EvalInput, rawContinuation?: Continuation): Promise<CandidateResult> {
  const run = startRun(rawInput, rawContinuation);
  try {
    const prepared = await prepareAndCheck(run);
    const plan = planChunks(run, prepared);
    const nextChunk = await runChunks(run, plan);
    // A spend cap reached: the chunks not started are not run (finalize writes their rows).
    const notStarted = run.meter?.reached ? nextChunk : plan.nChunks;
    if (nextChunk < plan.nChunks && notStarted === plan.nChunks) await continueFrom(run, prepared, nextChunk);
    return await finish(run, prepared, plan, notStarted);
  } catch (err) {
    throw await failure(run, err);
  }
}

/** Validates the input, sets up the run's state and its query and update handlers. */
function startRun(rawInput: EvalInput, rawContinuation: Continuation | undefined): Run {
  const parsedInput = EvalInput.safeParse(rawInput);
  if (!parsedInput.success) throw invalidInput('evaluation input', parsedInput.error.issues);
  const input = parsedInput.data;
  const parsedContinuation = rawContinuation === undefined ? undefined : Continuation.safeParse(rawContinuation);
  if (parsedContinuation && !parsedContinuation.success) throw invalidInput('continuation', parsedContinuation.error.issues);
  const continuation = parsedContinuation?.data;
  const info = workflowInfo();
  const progress = newProgress(input.tasks.length, continuation ? 'running' : 'preparing');
  if (continuation) Object.assign(progress, continuation.done);
  setHandler(progressQuery, () => progress);
  if (!continuation) upsertSearchAttributes([veroStatus('running')]);
  const run: Run = {
    input,
    continuation,
    info,
    startedAt: continuation?.startedAt ?? info.startTime.toISOString(),
    // The run id the evaluation started with: a reset (a new run id) keeps it, so the jobs on disk are found again
    // (the same as `info.runId` in every run that was not reset).
    runDir: continuation?.runDir ?? homePaths(input.home).runDir(input.evalId, info.originalExecutionRunId),
    progress,
    lanes: newLanePool(continuation?.concurrency ?? input.settings.concurrency),
    summaries: [],
    lanesGranted: null,
    meter: null,
    reports: new Map(),
    finishedChunks: new Set(),
    retry: continuation?.retry ?? null,
  };
  progress.concurrency = run.lanes.concurrency;
  showProgress(run);
  handleSetConcurrency(run);
  setHandler(chunkProgressSignal, (report) => {
    // A late report of a chunk that has finished, or of one of a run this one continues: its counts are in.
    if (run.finishedChunks.has(report.chunkIndex) || report.chunkIndex < (continuation?.nextChunk ?? 0)) return;
    run.reports.set(report.chunkIndex, report);
    showProgress(run);
  });
  handleRetryWhileRunning(run);
  carryPause(run, continuation?.paused);
  handlePauseAndResume({ lanes: run.lanes, progress, refusal: () => pauseRefusal(run) });
  return run;
}

/**
 * The Web UI shows a workflow's current details on its page: the evaluation's progress, its finished chunks'
 * counts plus its running chunks' last reports (a query-served field, not a command: replay-safe).
 */
const showProgress = (run: Run, note = '') =>
  setCurrentDetails(progressDetails(withReports(run.progress, run.reports.values()), run.info.workflowId) + note);

/** `vero set-concurrency`: validated, recorded in history, carried out by the lane pool. */
function handleSetConcurrency(run: Run): void {
  setHandler(
    setConcurrencyUpdate,
    async (concurrency) => {
      const previous = run.lanes.concurrency;
      run.progress.concurrency = concurrency;
      showProgress(run, ` (set from ${previous} by vero set-concurrency)`);
      await setPoolConcurrency(run.lanes, concurrency);
      return { previous, concurrency };
    },
    {
      validator: (concurrency) => {
        if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY)
          throw new Error(`concurrency: expected an integer from 1 to ${MAX_CONCURRENCY}, got ${String(concurrency)}`);
        if (run.lanesGranted === false)
          throw new Error('this evaluation was started by a vero-harbor without lane grants; its concurrency is fixed');
        if (run.progress.phase === 'finalizing' || run.progress.phase === 'done')
          throw new Error('every task of this evaluation has finished');
      },
    },
  );
}

/** `vero retry` while it runs: validated, recorded in history, carried out once every task has finished (finish). */
function handleRetryWhileRunning(run: Run): void {
  setHandler(
    retryRunningUpdate,
    (req) => {
      run.retry = queueRetry(run.retry, req);
      return run.retry;
    },
    {
      validator: (req) => {
        const problem = run.input.retryOf ? anotherRetryRunning(run.input.tasks) : queuedRetryProblem(run.input.tasks, req);
        if (problem !== null) throw new Error(problem);
        if (run.progress.phase === 'finalizing' || run.progress.phase === 'done' || run.progress.phase === 'cancelling')
          throw new Error('every task of this evaluation has finished: retry once its result is in');
        if (req.errors && !rowsComeBack(run.input))
          throw new Error(
            `--errors on a running evaluation of more than ${INLINE_TASK_LIMIT} tasks (or of several runs): retry --errors once it has finished`,
          );
      },
    },
  );
}

/** Whether the evaluation's rows come back through its workflow (so its error rows are known at its end). */
function rowsComeBack(input: EvalInput): boolean {
  const nChunks = Math.ceil(input.tasks.length / input.settings.chunkSize);
  return input.tasks.length <= INLINE_TASK_LIMIT && (input.settings.chunksPerRun === undefined || nChunks <= input.settings.chunksPerRun);
}

/** Why `vero pause` or `vero resume` is refused now (null: it is not). */
function pauseRefusal(run: Run): string | null {
  if (run.lanesGranted === false) return 'this evaluation was started by a vero-harbor without lane grants; it cannot be paused';
  if (run.progress.phase === 'finalizing' || run.progress.phase === 'done') return 'every task of this evaluation has finished';
  if (run.progress.phase === 'cancelling') return 'this evaluation is being cancelled';
  return null;
}

/** The candidate checked out (or carried from the previous run) and, on the first run, Harbor's dry run. */
async function prepareAndCheck(run: Run): Promise<Prepared> {
  const { input, continuation } = run;
  const prepared = continuation ?? (await prepareCandidate({ agentRepo: input.agentRepo, candidate: input.candidate, home: input.home }));
  if (!continuation) upsertSearchAttributes([{ key: VeroCandidate, value: prepared.commit }]);
  if (!continuation && input.settings.preflight !== false && patched('harbor-preflight')) {
    await preflightHarbor.executeWithOptions({ summary: `harbor --dry-run (task ${input.tasks[0]})` }, [
      {
        runDir: run.runDir,
        task: input.tasks[0]!,
        worktree: prepared.worktree,
        settings: input.settings,
        candidate: { agentRepo: input.agentRepo, commit: prepared.commit, home: input.home },
      },
    ]);
  }
  run.progress.phase = 'running';
  showProgress(run);
  return prepared;
}

function planChunks(run: Run, prepared: Prepared): ChunkPlan {
  const { input, continuation } = run;
  const size = input.settings.chunkSize;
  const nChunks = Math.ceil(input.tasks.length / size);
  // A run starts at most `perRun` chunks, then continues as new (histories recorded before: one run).
  const firstChunk = continuation?.nextChunk ?? 0;
  // Chunks report their progress as tasks finish (at most MAX_PROGRESS_REPORTS each), for the Web UI's details.
  const reportProgress = patched('chunk-progress-reports');
  const perRun = chunksPerRun(input.settings.concurrency, input.settings.chunksPerRun, undefined, reportProgress);
  const continues = continuation !== undefined || (nChunks > perRun && patched('continue-as-new'));
  const endChunk = continues ? Math.min(nChunks, firstChunk + perRun) : nChunks;
  // The rows come back through this history only when finalize takes them inline; otherwise they stay in the
  // chunks' histories and files, so this history holds no per-task payload (model/evaluation/history-bounds.ts).
  const inline = input.tasks.length <= INLINE_TASK_LIMIT && !continues;
  const rowsOutOfParent = !inline && (continuation !== undefined || patched('rows-out-of-parent'));
  const chunkInput = (i: number, lanes?: number): ChunkInput => ({
    chunkIndex: i,
    runDir: run.runDir,
    candidate: prepared.commit,
    worktree: prepared.worktree,
    tasks: input.tasks.slice(i * size, (i + 1) * size),
    settings: input.settings,
    agentRepo: input.agentRepo,
    home: input.home,
    ...(lanes !== undefined ? { lanes } : {}),
    ...(rowsOutOfParent ? { returnRows: false } : {}),
    ...(reportProgress ? { reportProgress: true } : {}),
  });
  return { size, nChunks, firstChunk, endChunk, continues, inline, chunkInput };
}

/** Runs this run's chunks; returns the first chunk it did not start (nChunks: none is left). */
async function runChunks(run: Run, plan: ChunkPlan): Promise<number> {
  const { input, progress } = run;
  const addSummary = (summary: ChunkSummary) => {
    run.summaries.push(summary);
    progress.done += summary.nTasks;
    progress.scored += summary.nScored;
    progress.errors += summary.nErrors;
    progress.scoreSum += summary.scoreSum;
    if (summary.nNotRun) progress.notRun = (progress.notRun ?? 0) + summary.nNotRun;
    run.finishedChunks.add(summary.chunkIndex);
    run.reports.delete(summary.chunkIndex);
    showProgress(run);
  };
  run.lanesGranted = patched('lane-grants');
  const cap = input.settings.spendCap;
  if (run.lanesGranted && cap && patched('spend-cap')) {
    run.meter = meterSpend(cap, run.info.workflowId, run.lanes, progress, run.continuation?.spent);
  }
  if (run.lanesGranted) {
    // A run whose history is already at its budget (concurrency raised since it began) starts no more chunks.
    const runFull = () => plan.continues && workflowInfo().historyLength > PARENT_EVENT_BUDGET;
    return runChunksWithLaneGrants(plan.firstChunk, plan.endChunk, run.lanes, plan.chunkInput, addSummary, progress, runFull);
  }
  // Histories recorded before lane grants: one chunk after the other.
  for (let i = 0; i < plan.nChunks; i++) {
    const childId = chunkWorkflowId(run.info.workflowId, i);
    progress.currentChunk = childId;
    addSummary(await executeChild(evaluateChunk, { workflowId: childId, args: [plan.chunkInput(i)] }));
  }
  return plan.nChunks;
}

/** Continues as new from `nextChunk`, carrying the prepared candidate, the counts and the spend so far. */
async function continueFrom(run: Run, prepared: Prepared, nextChunk: number): Promise<never> {
  const { progress } = run;
  const { done, scored, errors, scoreSum } = progress;
  const next: Continuation = {
    commit: prepared.commit,
    worktree: prepared.worktree,
    runDir: run.runDir,
    startedAt: run.startedAt,
    nextChunk,
    done: { done, scored, errors, scoreSum, ...(progress.notRun ? { notRun: progress.notRun } : {}) },
    concurrency: run.lanes.concurrency,
    ...(run.meter ? { spent: run.meter.spent } : {}),
    ...(run.lanes.paused ? { paused: run.lanes.paused } : {}),
    ...(run.retry ? { retry: run.retry } : {}),
  };
  await condition(allHandlersFinished);
  return makeContinueAsNewFunc<typeof evaluateCandidate>({
    memo: run.info.memo,
    typedSearchAttributes: workflowInfo().typedSearchAttributes,
  })(run.input, next);
}

/** Finalizes: the result file, the result, the search attributes of the evaluation's outcome. */
async function finish(run: Run, prepared: Prepared, plan: ChunkPlan, notStarted: number): Promise<CandidateResult> {
  const { input, progress, meter, summaries } = run;
  summaries.sort((a, b) => a.chunkIndex - b.chunkIndex);
  progress.currentChunk = null;
  progress.phase = 'finalizing';
  showProgress(run);
  const result = await finalizeEvaluation({
    evalId: input.evalId,
    candidate: prepared.commit,
    candidateRef: input.candidateRef,
    home: input.home,
    runDir: run.runDir,
    nChunks: notStarted,
    configDigest: input.configDigest,
    settings: input.settings,
    startedAt: run.startedAt,
    skippedDirs: input.skippedDirs,
    // A `vero retry` run: its rows replace those of the same tasks in the evaluation's result file.
    ...(input.retryOf && patched('retry-tasks') ? { retryOf: input.retryOf } : {}),
    ...(meter
      ? {
          spend: { spent: meter.spent, reached: meter.reached, notStarted: meter.reached ? input.tasks.slice(notStarted * plan.size) : [] },
        }
      : {}),
    // The rows travel through Temporal when they fit, so finalize reads no file another worker wrote.
    ...(plan.inline && summaries.every((c) => c.results) ? { tasks: summaries.flatMap((c) => c.results!) } : {}),
  });
  progress.phase = 'done';
  settleFromResult(progress, result);
  showProgress(run);
  await meter?.leavePool();
  upsertSearchAttributes([
    veroStatus(result.status),
    { key: VeroScore, value: result.score },
    ...(result.usage?.costUsd != null ? [{ key: VeroCostUsd, value: result.usage.costUsd }] : []),
  ]);
  if (run.retry && patched(RETRY_RUNNING_PATCH)) await retryQueued(run, run.retry, result);
  await condition(allHandlersFinished);
  return result;
}

/**
 * A retry queued while it ran: continues as new with only those tasks (the named ones, and the rows that are
 * errors when asked) and `retryOf` this run's result file, as `vero retry` of a finished evaluation starts it.
 */
async function retryQueued(run: Run, retry: QueuedRetry, result: CandidateResult): Promise<void> {
  const errors = retry.errors ? (result.tasks ?? []).filter((t) => t.status === 'error').map((t) => t.task) : [];
  const chosen = new Set([...retry.tasks, ...errors]);
  const tasks = run.input.tasks.filter((t) => chosen.has(t));
  if (!tasks.length) return;
  await condition(allHandlersFinished);
  const retryOf = { resultFile: result.resultFile, previousRunId: run.info.runId, requestedAt: retry.requestedAt };
  await makeContinueAsNewFunc<typeof evaluateCandidate>({
    memo: run.info.memo,
    typedSearchAttributes: workflowInfo().typedSearchAttributes,
  })({ ...run.input, tasks, retryOf });
}

/**
 * What the run throws when something failed: continue-as-new as is; else the status recorded, and a chunk's
 * or an activity's failure surfaced as this workflow's own, so the UI and CLI show the reason, not "child
 * failed" or "Activity task failed".
 */
async function failure(run: Run, err: unknown): Promise<unknown> {
  if (err instanceof ContinueAsNew) return err;
  await run.meter?.leavePool();
  upsertSearchAttributes([veroStatus(isCancellation(err) ? 'cancelled' : 'error')]);
  if ((err instanceof ChildWorkflowFailure || err instanceof ActivityFailure) && err.cause instanceof ApplicationFailure) {
    return ApplicationFailure.create({ message: err.cause.message, type: err.cause.type ?? undefined, nonRetryable: true, cause: err });
  }
  return err;
}
