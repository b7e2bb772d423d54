/**
 * One candidate evaluation. Durable: after a worker or server crash it resumes from history, and finished
 * tasks are never run again (their activity results are in the history of their chunk).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  ChildWorkflowFailure,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { CandidateResult, ChunkSummary, EvalInput, INLINE_TASK_LIMIT, newProgress } from '../core/eval-types';
import { CONFIG_FAILURES, FailureType } from '../core/failures';
import { VeroCandidate, VeroCostUsd, VeroScore, VeroStatus } from '../core/search-attributes';
import { evaluateChunk } from './evaluate-chunk';
import { progressQuery } from './queries';

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

export async function evaluateCandidate(rawInput: EvalInput): Promise<CandidateResult> {
  const parsed = EvalInput.safeParse(rawInput);
  if (!parsed.success) {
    throw ApplicationFailure.nonRetryable(
      `invalid evaluation input: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      FailureType.InvalidInput,
    );
  }
  const input = parsed.data;
  const info = workflowInfo();
  const startedAt = info.startTime.toISOString();
  const runDir = `${input.home}/runs/${input.evalId}/${info.runId}`;
  const summaries: ChunkSummary[] = [];
  const progress = newProgress(input.tasks.length, 'preparing');
  setHandler(progressQuery, () => progress);
  upsertSearchAttributes([{ key: VeroStatus, value: 'running' }]);

  try {
    const prepared = await prepareCandidate({ agentRepo: input.agentRepo, candidate: input.candidate, home: input.home });
    upsertSearchAttributes([{ key: VeroCandidate, value: prepared.commit }]);
    if (input.settings.preflight !== false && patched('harbor-preflight')) {
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
    for (let i = 0; i < nChunks; i++) {
      const childId = `${info.workflowId}/chunk-${i}`;
      progress.currentChunk = childId;
      const summary = await executeChild(evaluateChunk, {
        workflowId: childId,
        args: [
          {
            evalId: input.evalId,
            chunkIndex: i,
            runDir,
            candidate: prepared.commit,
            worktree: prepared.worktree,
            tasks: input.tasks.slice(i * size, (i + 1) * size),
            settings: input.settings,
            agentRepo: input.agentRepo,
            home: input.home,
          },
        ],
      });
      summaries.push(summary);
      progress.done += summary.nTasks;
      progress.scored += summary.nScored;
      progress.errors += summary.nErrors;
      progress.scoreSum += summary.scoreSum;
    }
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
      ...(input.tasks.length <= INLINE_TASK_LIMIT && summaries.every((c) => c.results)
        ? { tasks: summaries.flatMap((c) => c.results!) }
        : {}),
    });
    progress.phase = 'done';
    upsertSearchAttributes([
      { key: VeroStatus, value: result.status },
      { key: VeroScore, value: result.score },
      ...(result.usage?.costUsd != null ? [{ key: VeroCostUsd, value: result.usage.costUsd }] : []),
    ]);
    return result;
  } catch (err) {
    upsertSearchAttributes([{ key: VeroStatus, value: isCancellation(err) ? 'cancelled' : 'error' }]);
    // Surface a chunk's or an activity's failure as this workflow's own, so the UI and CLI show the reason,
    // not "child failed" or "Activity task failed".
    if ((err instanceof ChildWorkflowFailure || err instanceof ActivityFailure) && err.cause instanceof ApplicationFailure) {
      throw ApplicationFailure.create({ message: err.cause.message, type: err.cause.type ?? undefined, nonRetryable: true, cause: err });
    }
    throw err;
  }
}
