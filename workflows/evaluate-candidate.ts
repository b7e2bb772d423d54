/**
 * One candidate evaluation. Durable: after a worker or server crash it resumes from history, and finished
 * tasks are never run again (their activity results are in the history of their chunk).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  ContinueAsNew,
  makeContinueAsNewFunc,
  executeChild,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  CandidateResult,
  ChunkInput,
  ChunkSummary,
  Continuation,
  EvalInput,
  INLINE_TASK_LIMIT,
  newProgress,
  Progress,
} from '../model/eval-types';
import { chunksPerRun } from '../model/history-bounds';
import { CONFIG_FAILURES, FailureType } from '../model/failures';
import { VeroCandidate, VeroCostUsd, VeroScore, veroStatus } from '../model/search-attributes';
import { evaluateChunk } from './evaluate-chunk';
import { grantLanesSignal, lanesFreedSignal, progressQuery } from './queries';
import { chunkWorkflowId, homePaths } from '../model/paths';

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

/**
 * Chunks overlap so that no lane idles: the run's first chunk starts with `concurrency` lanes; a chunk with no
 * task left to start hands each lane back as it frees (lanesFreed); the parent gives freed lanes to the newest
 * chunk that still has tasks (grantLanes), or starts the next chunk with them. In flight: never more than
 * `concurrency`. Runs chunks [firstChunk, endChunk) and returns once all of them are done.
 */
async function runChunksWithLaneGrants(
  firstChunk: number,
  endChunk: number,
  concurrency: number,
  chunkInput: (i: number, lanes?: number) => ChunkInput,
  addSummary: (s: ChunkSummary) => void,
  progress: Progress,
): Promise<void> {
  const id = (i: number) => chunkWorkflowId(workflowInfo().workflowId, i);
  const running = new Map<number, Promise<void>>();
  let failure: unknown = null;
  let freed = 0;
  let newest = firstChunk - 1;
  let newestDrained = false;
  setHandler(lanesFreedSignal, ({ chunkIndex, lanes }) => {
    freed += lanes;
    if (chunkIndex === newest) newestDrained = true;
  });
  const start = (lanes: number) => {
    const i = ++newest;
    newestDrained = false;
    running.set(
      i,
      executeChild(evaluateChunk, { workflowId: id(i), args: [chunkInput(i, lanes)] }).then(
        (summary) => {
          addSummary(summary);
          running.delete(i);
          progress.runningChunks = [...running.keys()].map(id);
        },
        (err: unknown) => {
          failure ??= err;
          running.delete(i);
        },
      ),
    );
    progress.runningChunks = [...running.keys()].map(id);
    progress.currentChunk = id(i);
  };
  start(concurrency);
  try {
    await grantLanesUntilDone();
  } catch (err) {
    // Cancelled: the chunks are being cancelled too; return only once they (and their harbor runs) are done.
    if (isCancellation(err)) await Promise.all([...running.values()]);
    throw err;
  }
  if (failure !== null) throw failure;
  progress.runningChunks = [];

  async function grantLanesUntilDone(): Promise<void> {
    while (running.size > 0 && failure === null) {
      await condition(
        () => failure !== null || running.size === 0 || (freed > 0 && newest < endChunk - 1) || (freed > 0 && !newestDrained),
      );
      progress.runningChunks = [...running.keys()].map(id);
      if (failure !== null || freed === 0) continue;
      const lanes = freed;
      freed = 0;
      if (!newestDrained && running.has(newest)) {
        // The newest chunk still has tasks to start: it takes the lanes (or hands back what it cannot use).
        const ok = await getExternalWorkflowHandle(id(newest))
          .signal(grantLanesSignal, lanes)
          .then(
            () => true,
            () => false,
          );
        if (!ok) freed += lanes; // it just finished: the lanes go round again
      } else if (newest < endChunk - 1) {
        start(lanes);
      }
    }
  }
}

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
    };
    if (patched('lane-grants')) {
      await runChunksWithLaneGrants(firstChunk, endChunk, input.settings.concurrency, chunkInput, addSummary, progress);
    } else {
      // Histories recorded before lane grants: one chunk after the other.
      for (let i = 0; i < nChunks; i++) {
        const childId = chunkWorkflowId(info.workflowId, i);
        progress.currentChunk = childId;
        addSummary(await executeChild(evaluateChunk, { workflowId: childId, args: [chunkInput(i)] }));
      }
    }
    if (endChunk < nChunks) {
      const { done, scored, errors, scoreSum } = progress;
      const next: Continuation = {
        commit: prepared.commit,
        worktree: prepared.worktree,
        runDir,
        startedAt,
        nextChunk: endChunk,
        done: { done, scored, errors, scoreSum },
      };
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
      nChunks,
      configDigest: input.configDigest,
      settings: input.settings,
      split: null,
      startedAt,
      skippedDirs: input.skippedDirs,
      // The rows travel through Temporal when they fit, so finalize reads no file another worker wrote.
      ...(inline && summaries.every((c) => c.results) ? { tasks: summaries.flatMap((c) => c.results!) } : {}),
    });
    progress.phase = 'done';
    upsertSearchAttributes([
      veroStatus(result.status),
      { key: VeroScore, value: result.score },
      ...(result.usage?.costUsd != null ? [{ key: VeroCostUsd, value: result.usage.costUsd }] : []),
    ]);
    return result;
  } catch (err) {
    if (err instanceof ContinueAsNew) throw err;
    upsertSearchAttributes([veroStatus(isCancellation(err) ? 'cancelled' : 'error')]);
    // Surface a chunk's or an activity's failure as this workflow's own, so the UI and CLI show the reason,
    // not "child failed" or "Activity task failed".
    if ((err instanceof ChildWorkflowFailure || err instanceof ActivityFailure) && err.cause instanceof ApplicationFailure) {
      throw ApplicationFailure.create({ message: err.cause.message, type: err.cause.type ?? undefined, nonRetryable: true, cause: err });
    }
    throw err;
  }
}
