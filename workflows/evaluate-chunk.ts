/**
 * A chunk of tasks of one evaluation, as a child workflow so each history stays small at 5,000 tasks.
 * Runs `concurrency` lanes; each lane takes the next task and runs it as one activity.
 */
import {
  ActivityCancellationType,
  CancellationScope,
  condition,
  patched,
  sleep,
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { ChunkInput, ChunkSummary, TaskResult } from '../model/eval-types';
import { newProgress, notRunRow } from '../model/eval-types';
import { type Spend, spendOfTask } from '../model/spend-cap';
import { CONFIG_FAILURES, FailureType } from '../model/failures';
import { grantLanesSignal, lanesFreedSignal, progressQuery, revokeLanesSignal, spendCapReachedSignal, taskSpentSignal } from './queries';
import { runPaths } from '../model/paths';
import { jobNameFor } from '../model/harbor-argv';
import { causeChain } from '../model/errors';

function configFailure(err: unknown): ApplicationFailure | null {
  const cause = err instanceof ActivityFailure ? err.cause : null;
  return cause instanceof ApplicationFailure && cause.type && (CONFIG_FAILURES as string[]).includes(cause.type) ? cause : null;
}

/** Activity attempts beyond `task_attempts` for a task whose worker died (heartbeat timeouts). */
const WORKER_CRASH_ALLOWANCE = 10;

export async function evaluateChunk(input: ChunkInput): Promise<ChunkSummary> {
  const s = input.settings;
  const { runTask, saveChunkResults } = proxyActivities<Activities>({
    // runTask enforces the task timeout itself (and salvages finished trials); this is the backstop.
    startToCloseTimeout: `${Math.ceil(s.taskTimeoutSec + 120)}s`,
    heartbeatTimeout: `${s.heartbeatTimeoutSec}s`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      // runTask counts Harbor's failures itself (carried in its heartbeat details) against task_attempts; the
      // extra attempts absorb crashes of our own workers, which must not use up a task's attempts.
      maximumAttempts: s.taskAttempts + WORKER_CRASH_ALLOWANCE,
      initialInterval: '2s',
      backoffCoefficient: 2,
      maximumInterval: '2m',
      nonRetryableErrorTypes: CONFIG_FAILURES,
    },
  });

  const progress = newProgress(input.tasks.length, 'running');
  setHandler(progressQuery, () => progress);

  const results: TaskResult[] = new Array<TaskResult>(input.tasks.length);
  let next = 0;
  const granted = input.lanes !== undefined; // the lane-grant protocol (see queries.ts)
  const parentId = workflowInfo().parent?.workflowId;
  const freeLanes = async (lanes: number, drained = true, spent?: Spend): Promise<void> => {
    if (!granted || !parentId || lanes < 1) return;
    await getExternalWorkflowHandle(parentId)
      .signal(lanesFreedSignal, {
        chunkIndex: input.chunkIndex,
        lanes,
        ...(drained ? {} : { drained: false }),
        ...(spent ? { spent } : {}),
      })
      .catch(() => undefined); // the parent is gone: nobody needs the lane
  };
  const lanesRunning: Promise<void>[] = [];
  // Lanes are numbered as they start; revokeLanes retires every lane numbered below `revokedBelow`.
  let lanesStarted = 0;
  let revokedBelow = 0;
  // Spend caps (model/spend-cap.ts): each finished task's spend goes to the parent, which says when to stop.
  const metered = s.spendCap !== undefined && parentId !== undefined && patched('spend-cap');
  const graceSec = metered ? s.spendCap?.graceSec : undefined;
  let capStop: string | null = null;
  let graceExpired = false;
  const runningScopes = new Set<CancellationScope>();
  const stoppable = async <T>(run: () => Promise<T>): Promise<T> => {
    const scope = new CancellationScope();
    runningScopes.add(scope);
    try {
      return await scope.run(run);
    } finally {
      runningScopes.delete(scope);
    }
  };
  const reportSpend = (r: TaskResult) => {
    void getExternalWorkflowHandle(parentId!)
      .signal(taskSpentSignal, { chunkIndex: input.chunkIndex, ...spendOfTask(r.usage) })
      .catch(() => undefined); // the parent is gone: nobody meters any more
  };
  const jobDirOf = (task: string) => runPaths(input.runDir).job(jobNameFor(task)).dir;
  const errorRow = (task: string, err: unknown): TaskResult => ({
    task,
    status: 'error',
    score: null,
    metrics: {},
    trial: null,
    taskName: null,
    nTrials: 0,
    runs: s.taskAttempts,
    exceptions: [],
    timedOut: false,
    jobDir: jobDirOf(task), // the job harbor wrote (or began) for this task: its logs say why it failed
    error: causeChain(err),
  });
  const lane = async (): Promise<void> => {
    const laneNo = lanesStarted++;
    const lastSpend = await runLane(laneNo);
    // This chunk has no task left to start (or the parent took the lane back): the lane goes back to the parent,
    // with what its last task spent (so the parent meters it before it can start anything with the lane).
    await freeLanes(1, next >= input.tasks.length, lastSpend ?? undefined);
  };
  const laneGoesOn = (laneNo: number) => next < input.tasks.length && laneNo >= revokedBelow && capStop === null;
  /** Runs tasks while there are any for this lane; a metered lane returns its last task's spend, not yet reported. */
  const runLane = async (laneNo: number): Promise<Spend | null> => {
    let lastSpend: Spend | null = null;
    while (laneGoesOn(laneNo)) {
      const i = next++;
      const task = input.tasks[i]!;
      progress.running++;
      const run = () =>
        runTask.executeWithOptions({ summary: `task ${task}` }, [
          {
            runDir: input.runDir,
            task,
            worktree: input.worktree,
            settings: s,
            ...(input.agentRepo && input.home
              ? { candidate: { agentRepo: input.agentRepo, commit: input.candidate, home: input.home } }
              : {}),
          },
        ]);
      try {
        results[i] = graceSec !== undefined ? await stoppable(run) : await run();
      } catch (err) {
        if (isCancellation(err) && graceExpired && capStop !== null) {
          // Stopped by the spend cap's grace period: what its trials spent is not known.
          results[i] = notRunRow(task, `stopped after the ${graceSec}s grace period: ${capStop}`, jobDirOf(task));
        } else {
          if (isCancellation(err)) throw err;
          const fatal = configFailure(err);
          if (fatal) throw ApplicationFailure.nonRetryable(`task "${task}": ${fatal.message}`, fatal.type ?? FailureType.HarborConfigError);
          // Attempts exhausted by timeouts or crashes: an error row, never a silent 0.
          results[i] = errorRow(task, err);
        }
      } finally {
        progress.running--;
      }
      const r = results[i]!;
      if (metered && r.status !== 'not_run') {
        // A lane that goes on reports now; one that is freed reports with the lane (lanesFreed).
        if (laneGoesOn(laneNo) || !granted) reportSpend(r);
        else lastSpend = spendOfTask(r.usage);
      }
      progress.done++;
      if (r.status === 'scored') {
        progress.scored++;
        progress.scoreSum += r.score ?? 0;
      } else if (r.status === 'not_run') progress.notRun = (progress.notRun ?? 0) + 1;
      else progress.errors++;
    }
    return lastSpend;
  };
  if (metered) {
    setHandler(spendCapReachedSignal, (reason) => {
      if (capStop !== null) return;
      capStop = reason;
      progress.spendCapReached = reason;
      if (graceSec === undefined) return;
      void sleep(graceSec * 1000).then(
        () => {
          graceExpired = true;
          for (const scope of runningScopes) scope.cancel();
        },
        () => undefined, // this chunk was cancelled meanwhile
      );
    });
  }
  if (granted) {
    setHandler(revokeLanesSignal, () => {
      revokedBelow = lanesStarted;
    });
    setHandler(grantLanesSignal, (lanes: number) => {
      const usable = Math.min(lanes, input.tasks.length - next);
      for (let i = 0; i < usable; i++) lanesRunning.push(lane());
      if (lanes > usable) void freeLanes(lanes - usable);
    });
  }
  const initial = granted ? Math.min(input.lanes!, input.tasks.length) : Math.min(s.concurrency, input.tasks.length);
  for (let i = 0; i < initial; i++) lanesRunning.push(lane());
  if (granted && input.lanes! > initial) await freeLanes(input.lanes! - initial);
  // Lanes granted while others run join `lanesRunning`; wait until every one of them has ended, and while tasks
  // are left after the parent took every lane back, for the lanes it grants again.
  for (let settled = 0; ; ) {
    const n = lanesRunning.length;
    await Promise.all(lanesRunning.slice(settled, n));
    settled = n;
    if (lanesRunning.length > settled) continue;
    if (next >= input.tasks.length || capStop !== null) break;
    await condition(() => lanesRunning.length > settled || capStop !== null);
  }
  if (capStop !== null) {
    for (let i = 0; i < input.tasks.length; i++) {
      if (results[i]) continue;
      results[i] = notRunRow(input.tasks[i]!, `not started: ${capStop}`, runPaths(input.runDir).jobsDir);
      progress.done++;
      progress.notRun = (progress.notRun ?? 0) + 1;
    }
  }
  progress.phase = 'done';
  const summary = await saveChunkResults({ runDir: input.runDir, chunkIndex: input.chunkIndex, results });
  return input.returnRows === false ? summary : { ...summary, results };
}
