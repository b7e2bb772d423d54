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
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { CandidateResult, ChunkInput, ChunkSummary, Continuation, EvalInput, INLINE_TASK_LIMIT, newProgress } from '../model/eval-types';
import { chunksPerRun, PARENT_EVENT_BUDGET } from '../model/history-bounds';
import { CONFIG_FAILURES, FailureType } from '../model/failures';
import { VeroCandidate, VeroCostUsd, VeroScore, veroStatus } from '../model/search-attributes';
import { evaluateChunk } from './evaluate-chunk';
import { progressQuery, setConcurrencyUpdate } from './queries';
import { newLanePool, runChunksWithLaneGrants, setPoolConcurrency } from './lane-grants';
import { meterSpend, type SpendMeter } from './spend-meter';
import { chunkWorkflowId, homePaths } from '../model/paths';
import { MAX_CONCURRENCY } from '../model/eval-config';

const { prepareCandidate, finalizeEvaluation } = proxyActivities<Activities>({
  startToCloseTimeout: '30m',
  // Both heartbeat on a timer: a dead worker is noticed in seconds, not at the start-to-close timeout.
  heartbeatTimeout: '30s',
  retry: { maximumAttempts: 5, initialInterval: '2s', nonRetryableErrorTypes: CONFIG_FAILURES },
});

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

/**
 * `continuation` is absent when a client starts the evaluation; a run that has started `chunksPerRun` chunks
 * continues as new with it (model/history-bounds.ts), so every run's history stays bounded.
 */
export async function evaluateCandidate(rawInput: EvalInput, rawContinuation?: Continuation): Promise<CandidateResult> {
  const parsedInput = EvalInput.safeParse(rawInput);
  if (!parsedInput.success) throw invalidInput('evaluation input', parsedInput.error.issues);
  const input = parsedInput.data;
  const parsedContinuation = rawContinuation === undefined ? undefined : Continuation.safeParse(rawContinuation);
  if (parsedContinuation && !parsedContinuation.success) throw invalidInput('continuation', parsedContinuation.error.issues);
  const continuation = parsedContinuation?.data;
  const info = workflowInfo();
  const startedAt = continuation?.startedAt ?? info.startTime.toISOString();
  const runDir = continuation?.runDir ?? homePaths(input.home).runDir(input.evalId, info.runId);
  const summaries: ChunkSummary[] = [];
  const progress = newProgress(input.tasks.length, continuation ? 'running' : 'preparing');
  if (continuation) Object.assign(progress, continuation.done);
  setHandler(progressQuery, () => progress);
  if (!continuation) upsertSearchAttributes([veroStatus('running')]);
  const lanes = newLanePool(continuation?.concurrency ?? input.settings.concurrency);
  progress.concurrency = lanes.concurrency;
  // The Web UI shows a workflow's current details on its page.
  const showConcurrency = (n: number, note = '') => setCurrentDetails(`concurrency ${n}${note}`);
  showConcurrency(lanes.concurrency);
  let lanesGranted: boolean | null = null; // decided where the chunks start, by patched('lane-grants')
  let meter: SpendMeter | null = null; // a spend-capped evaluation's
  setHandler(
    setConcurrencyUpdate,
    async (concurrency) => {
      const previous = lanes.concurrency;
      progress.concurrency = concurrency;
      showConcurrency(concurrency, ` (set from ${previous} by vero set-concurrency)`);
      await setPoolConcurrency(lanes, concurrency);
      return { previous, concurrency };
    },
    {
      validator: (concurrency) => {
        if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY)
          throw new Error(`concurrency: expected an integer from 1 to ${MAX_CONCURRENCY}, got ${String(concurrency)}`);
        if (lanesGranted === false)
          throw new Error('this evaluation was started by a vero-harbor without lane grants; its concurrency is fixed');
        if (progress.phase === 'finalizing' || progress.phase === 'done') throw new Error('every task of this evaluation has finished');
      },
    },
  );

  try {
    const prepared = continuation ?? (await prepareCandidate({ agentRepo: input.agentRepo, candidate: input.candidate, home: input.home }));
    if (!continuation) upsertSearchAttributes([{ key: VeroCandidate, value: prepared.commit }]);
    if (!continuation && input.settings.preflight !== false && patched('harbor-preflight')) {
      await preflightHarbor.executeWithOptions({ summary: `harbor --dry-run (task ${input.tasks[0]})` }, [
        {
          runDir,
          task: input.tasks[0]!,
          worktree: prepared.worktree,
          settings: input.settings,
          candidate: { agentRepo: input.agentRepo, commit: prepared.commit, home: input.home },
        },
      ]);
    }
    progress.phase = 'running';
    const size = input.settings.chunkSize;
    const nChunks = Math.ceil(input.tasks.length / size);
    // A run starts at most `perRun` chunks, then continues as new (histories recorded before: one run).
    const firstChunk = continuation?.nextChunk ?? 0;
    const perRun = chunksPerRun(input.settings.concurrency, input.settings.chunksPerRun);
    const continues = continuation !== undefined || (nChunks > perRun && patched('continue-as-new'));
    const endChunk = continues ? Math.min(nChunks, firstChunk + perRun) : nChunks;
    // The rows come back through this history only when finalize takes them inline; otherwise they stay in the
    // chunks' histories and files, so this history holds no per-task payload (model/history-bounds.ts).
    const inline = input.tasks.length <= INLINE_TASK_LIMIT && !continues;
    const rowsOutOfParent = !inline && (continuation !== undefined || patched('rows-out-of-parent'));
    const chunkInput = (i: number, lanes?: number): ChunkInput => ({
      chunkIndex: i,
      runDir,
      candidate: prepared.commit,
      worktree: prepared.worktree,
      tasks: input.tasks.slice(i * size, (i + 1) * size),
      settings: input.settings,
      agentRepo: input.agentRepo,
      home: input.home,
      ...(lanes !== undefined ? { lanes } : {}),
      ...(rowsOutOfParent ? { returnRows: false } : {}),
    });
    const addSummary = (summary: ChunkSummary) => {
      summaries.push(summary);
      progress.done += summary.nTasks;
      progress.scored += summary.nScored;
      progress.errors += summary.nErrors;
      progress.scoreSum += summary.scoreSum;
      if (summary.nNotRun) progress.notRun = (progress.notRun ?? 0) + summary.nNotRun;
    };
    let nextChunk = nChunks; // the first chunk the next run starts (none: this run finishes the evaluation)
    lanesGranted = patched('lane-grants');
    const cap = input.settings.spendCap;
    if (lanesGranted && cap && patched('spend-cap')) {
      meter = meterSpend(cap, info.workflowId, lanes, progress, continuation?.spent);
    }
    if (lanesGranted) {
      // A run whose history is already at its budget (concurrency raised since it began) starts no more chunks.
      const runFull = () => continues && workflowInfo().historyLength > PARENT_EVENT_BUDGET;
      nextChunk = await runChunksWithLaneGrants(firstChunk, endChunk, lanes, chunkInput, addSummary, progress, runFull);
    } else {
      // Histories recorded before lane grants: one chunk after the other.
      for (let i = 0; i < nChunks; i++) {
        const childId = chunkWorkflowId(info.workflowId, i);
        progress.currentChunk = childId;
        addSummary(await executeChild(evaluateChunk, { workflowId: childId, args: [chunkInput(i)] }));
      }
    }
    // A spend cap reached: the chunks not started are not run (finalize writes their rows).
    const notStarted = meter?.reached ? nextChunk : nChunks;
    if (nextChunk < nChunks && notStarted === nChunks) {
      const { done, scored, errors, scoreSum } = progress;
      const next: Continuation = {
        commit: prepared.commit,
        worktree: prepared.worktree,
        runDir,
        startedAt,
        nextChunk,
        done: { done, scored, errors, scoreSum, ...(progress.notRun ? { notRun: progress.notRun } : {}) },
        concurrency: lanes.concurrency,
        ...(meter ? { spent: meter.spent } : {}),
      };
      await condition(allHandlersFinished);
      await makeContinueAsNewFunc<typeof evaluateCandidate>({
        memo: info.memo,
        typedSearchAttributes: workflowInfo().typedSearchAttributes,
      })(input, next);
    }
    summaries.sort((a, b) => a.chunkIndex - b.chunkIndex);
    progress.currentChunk = null;
    progress.phase = 'finalizing';
    const result = await finalizeEvaluation({
      evalId: input.evalId,
      candidate: prepared.commit,
      candidateRef: input.candidateRef,
      home: input.home,
      runDir,
      nChunks: notStarted,
      configDigest: input.configDigest,
      settings: input.settings,
      startedAt,
      skippedDirs: input.skippedDirs,
      ...(meter
        ? {
            spend: {
              spent: meter.spent,
              reached: meter.reached,
              notStarted: meter.reached ? input.tasks.slice(notStarted * size) : [],
            },
          }
        : {}),
      // The rows travel through Temporal when they fit, so finalize reads no file another worker wrote.
      ...(inline && summaries.every((c) => c.results) ? { tasks: summaries.flatMap((c) => c.results!) } : {}),
    });
    progress.phase = 'done';
    await meter?.leavePool();
    upsertSearchAttributes([
      veroStatus(result.status),
      { key: VeroScore, value: result.score },
      ...(result.usage?.costUsd != null ? [{ key: VeroCostUsd, value: result.usage.costUsd }] : []),
    ]);
    await condition(allHandlersFinished);
    return result;
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    await meter?.leavePool();
    upsertSearchAttributes([veroStatus(isCancellation(err) ? 'cancelled' : 'error')]);
    // Surface a chunk's or an activity's failure as this workflow's own, so the UI and CLI show the reason,
    // not "child failed" or "Activity task failed".
    if ((err instanceof ChildWorkflowFailure || err instanceof ActivityFailure) && err.cause instanceof ApplicationFailure) {
      throw ApplicationFailure.create({ message: err.cause.message, type: err.cause.type ?? undefined, nonRetryable: true, cause: err });
    }
    throw err;
  }
}
