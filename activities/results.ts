/** Evaluation results on disk: chunk files during the run, one result file (+ per-sample files) at the end. */
import type { FinalizeInput, SaveChunkInput } from '../model/evaluation/activity-payloads';
import * as path from 'node:path';
import { faultPause } from './fault-pause';
import { withHeartbeat } from './heartbeat';
import { CandidateResult, EvalStatus, INLINE_TASK_LIMIT } from '../model/evaluation/candidate-result';
import { ChunkSummary } from '../model/evaluation/chunk-payloads';
import { countedTaskScores, notRunRow, TaskResult } from '../model/evaluation/task-result';
import { attemptStats, scoreUncertainty } from '../model/race/uncertainty';
import { addUsage, NO_USAGE } from '../model/harbor/trial-ranking';
import { homePaths, runPaths } from '../model/paths';
import { writeJsonDurable } from '../infra/atomic-file';
import { previousResult, readChunkRows, replaceSamples } from '../infra/result-files';
import type { SpendReport } from '../model/evaluation/spend-cap';
import { mergeRetried, type RetryOf } from '../model/evaluation/retry';
import { finalizedResultOfRun } from '../client/eval-results';
import { rowsOfRun } from '../client/run-rows';
import { Context } from '@temporalio/activity';

export type { FinalizeInput, SaveChunkInput };

export async function saveChunkResults(input: SaveChunkInput): Promise<ChunkSummary> {
  writeJsonDurable(runPaths(input.runDir).chunkFile(input.chunkIndex), input.results);
  return summarize(input.chunkIndex, input.results);
}

function summarize(chunkIndex: number, results: TaskResult[]): ChunkSummary {
  const scored = results.filter((r) => r.status === 'scored');
  const nNotRun = results.filter((r) => r.status === 'not_run').length;
  return {
    chunkIndex,
    nTasks: results.length,
    nScored: scored.length,
    nErrors: results.length - scored.length - nNotRun,
    scoreSum: scored.reduce((a, r) => a + (r.score ?? 0), 0),
    ...(nNotRun ? { nNotRun } : {}),
  };
}

/** vero's SampleResult shape, one per task. */
function sampleResult(r: TaskResult, index: number, input: FinalizeInput): Record<string, unknown> {
  const datasetId = input.settings.source.path ? path.basename(input.settings.source.path) : input.settings.source.dataset;
  return {
    dataset_sample: { sample_id: index, split: 'all', dataset_id: datasetId },
    commit: input.candidate,
    result_id: input.evalId,
    score: r.score,
    metrics: r.metrics,
    output: { task_name: r.taskName ?? r.task, trial_name: r.trial, job_dir: r.jobDir },
    error: r.error,
  };
}

function spendReport(input: FinalizeInput, nNotRun: number): SpendReport {
  const cap = input.settings.spendCap!;
  return {
    maxCostUsd: cap.maxCostUsd ?? null,
    maxTokens: cap.maxTokens ?? null,
    pool: cap.pool ?? null,
    spent: input.spend?.spent ?? { costUsd: 0, tokens: 0, unmetered: 0 },
    reached: input.spend?.reached ?? null,
    nNotRun,
  };
}

/** Merges the chunk files into the evaluation's result file and returns the (small) CandidateResult. */
export async function finalizeEvaluation(input: FinalizeInput): Promise<CandidateResult> {
  return withHeartbeat(async () => {
    await faultPause('finalize');
    return finalizeNow(input, input.retryOf ? await retryBase(input.evalId, input.retryOf) : null);
  });
}

type PreviousResult = ReturnType<typeof previousResult>;

/**
 * The rows a `vero retry` run replaces some of: the result its previous run finalized, from that run's history in
 * Temporal (the result file may be on another host); beyond INLINE_TASK_LIMIT tasks, its result file when this
 * host has it, else gathered from the chunks' histories in Temporal (client/run-rows.ts).
 */
async function retryBase(evalId: string, retryOf: RetryOf): Promise<PreviousResult> {
  const client = Context.current().client;
  const finalized = await finalizedResultOfRun(client, evalId, retryOf.previousRunId);
  if (finalized?.tasks) return { tasks: finalized.tasks, startedAt: finalized.startedAt, retries: finalized.retries };
  try {
    return previousResult(retryOf.resultFile);
  } catch (e) {
    const rows = await rowsOfRun(client, evalId, retryOf.previousRunId);
    if (rows) return rows;
    throw e;
  }
}

function finalizeNow(input: FinalizeInput, previous: PreviousResult | null): CandidateResult {
  const tasks: TaskResult[] = input.tasks ? [...input.tasks] : [];
  for (let i = 0; !input.tasks && i < input.nChunks; i++) {
    const file = runPaths(input.runDir).chunkFile(i);
    tasks.push(...readChunkRows(file));
  }
  const notRunWhy = `not started: ${input.spend?.reached ?? ''}`;
  for (const task of input.spend?.notStarted ?? []) tasks.push(notRunRow(task, notRunWhy, runPaths(input.runDir).jobsDir));
  tasks.sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
  if (previous && input.retryOf) tasks.splice(0, tasks.length, ...mergeRetried(previous.tasks, tasks, input.retryOf.requestedAt));
  const s = summarize(0, tasks);
  // The denominators are the tasks that ran: a spend cap's `not_run` rows are neither scores nor errors.
  const ran = tasks.filter((t) => t.status !== 'not_run');
  const nNotRun = tasks.length - ran.length;
  const errorRate = ran.length ? s.nErrors / ran.length : 0;
  const failed = errorRate >= input.settings.errorRateThreshold && s.nErrors > 0;
  const status: EvalStatus = nNotRun > 0 ? 'budget_exhausted' : failed ? 'failed' : 'completed';
  const resultFile = homePaths(input.home).resultFile(input.evalId);
  const nInvalidTrials = tasks.reduce((a, t) => a + (t.nInvalidTrials ?? 0), 0);
  const result: CandidateResult = {
    evalId: input.evalId,
    candidate: input.candidate,
    candidateRef: input.candidateRef,
    status,
    score: ran.length ? s.scoreSum / ran.length : 0,
    scoreOfScored: s.nScored ? s.scoreSum / s.nScored : null,
    uncertainty: scoreUncertainty(countedTaskScores(ran)),
    attempts: attemptStats(ran.map((t) => (t.status === 'scored' ? (t.trialRewards ?? null) : []))),
    errorsCountedAsZero: true,
    nTasks: tasks.length,
    nScored: s.nScored,
    nErrors: s.nErrors,
    errorRate,
    errorRateThreshold: input.settings.errorRateThreshold,
    configDigest: input.configDigest,
    resultFile,
    tasks,
    startedAt: previous?.startedAt ?? input.startedAt,
    finishedAt: new Date().toISOString(),
    usage: tasks.map((t) => t.usage ?? NO_USAGE).reduce(addUsage, NO_USAGE),
    harborVersions: [...new Set(tasks.map((t) => t.harborVersion).filter((v): v is string => !!v))].sort(),
    skippedDirs: input.skippedDirs ?? [],
    ...(nInvalidTrials ? { nInvalidTrials } : {}),
    ...(input.settings.spendCap ? { spend: spendReport(input, nNotRun), nRun: ran.length } : {}),
    ...(previous && input.retryOf
      ? {
          retries: [
            ...(previous.retries ?? []),
            { at: input.retryOf.requestedAt, tasks: tasks.filter((t) => t.retried?.at === input.retryOf!.requestedAt).map((t) => t.task) },
          ],
        }
      : {}),
  };
  const samplesDir = homePaths(input.home).samplesDir(input.evalId);
  // The samples are committed by the result file (flushed, written last); a retried finalize writes them again.
  replaceSamples(
    samplesDir,
    tasks.map((t, i) => sampleResult(t, i, input)),
  );
  writeJsonDurable(resultFile, { ...result, runDir: input.runDir, settings: input.settings });
  return { ...result, tasks: tasks.length <= INLINE_TASK_LIMIT ? tasks : null };
}
