/**
 * A chunk's lanes: each takes the next task and runs it as one activity, until none is left. Under the
 * lane-grant protocol (lane-signals.ts) the parent owns the lanes: a lane with nothing left goes back to it
 * (`lanesFreed`), it may grant more (`grantLanes`) or take them back after their current task (`revokeLanes`).
 */
import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  setCurrentDetails,
  setHandler,
  workflowInfo,
  type ActivityInterfaceFor,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { countFinished, type Progress } from '../model/evaluation/progress';
import { notRunRow, type TaskResult } from '../model/evaluation/task-result';
import { type ChunkInput } from '../model/evaluation/chunk-payloads';
import type { RunTaskInput } from '../model/evaluation/activity-payloads';
import { runPaths } from '../model/paths';
import { spendOfTask, type TaskSpend } from '../model/evaluation/spend-cap';
import type { ChunkSpendStop } from './chunk-spend-stop';
import { PAUSE_PATCH, REQUEUE_STOPPED_PATCH, pauseChunkSignal, resumeChunkSignal } from './pause';
import { chunkProgressSignal, grantLanesSignal, lanesFreedSignal, revokeLanesSignal } from './lane-signals';
import { RESET_SAFE_CHUNKS } from './reset-safe';
import { progressDetails, reportsProgressAt } from '../model/evaluation/progress-details';
import { taskSpentSignal } from './spend-signals';
import { ChunkTeardowns, LANE_TEARDOWN_PATCH } from './chunk-teardowns';
import { teardownBound } from '../model/evaluation/lane-teardown';
import { failedTaskRow, stoppedAlone, taskJobDir } from './activity-policy';

export class ChunkLanes {
  /** Each task's row, in task order, as it finishes. */
  readonly results: TaskResult[];
  private next = 0;
  // Lanes are numbered as they start; revokeLanes retires every lane numbered below `revokedBelow`.
  private lanesStarted = 0;
  private revokedBelow = 0;
  private readonly running: Promise<void>[] = [];
  private readonly granted: boolean;
  private readonly parentId = workflowInfo().parent?.workflowId;
  /**
   * Whether a cancel waits for every lane (granted ones too) to end before the chunk ends, so no activity of it is
   * abandoned with its harbor running, and no lane's cancellation goes unhandled (patched
   * 'chunk-lanes-settle-on-cancel'; histories before: the first lane's cancellation ended the chunk).
   */
  private readonly settleOnCancel = patched('chunk-lanes-settle-on-cancel');
  /** The first lane's failure (with settleOnCancel: lanes never reject; run() throws this once they all ended). */
  private failure: { err: unknown } | null = null;
  /**
   * Whether the parent can pause this chunk (patched 'pause-resume'; workflows/pause.ts): while `paused`, no lane
   * starts a task; with `stopRunning` the running tasks' scopes are cancelled and their tasks `requeued`, to
   * run first once resumed.
   */
  private readonly pausable = patched(PAUSE_PATCH);
  /**
   * Whether a task a pause stopped runs again on resume however its attempt ended (patched
   * 'requeue-stopped-attempts'): one whose worker died while its cancellation was asked for times out instead of
   * being cancelled, and its harbor may still finish; histories before: such a task became an error row.
   */
  private readonly requeueStopped = this.pausable && patched(REQUEUE_STOPPED_PATCH);
  /**
   * Whether reports name their task and this chunk (patched 'reset-safe-chunks'): the parent counts a task's spend
   * once, and takes lanes back only from its own chunks (a reset leaves the old run's chunks running).
   */
  private readonly sender = patched(RESET_SAFE_CHUNKS) ? { chunkId: workflowInfo().workflowId, chunkRunId: workflowInfo().runId } : null;
  private paused: { stopRunning: boolean } | null = null;
  private readonly requeued: number[] = [];
  /** Each running task's scope, with its task's name. */
  private readonly taskScopes = new Map<CancellationScope, string>();
  private readonly stoppedByPause = new Set<CancellationScope>();
  /**
   * The tasks tearing down out of their lanes (patched 'lane-released-at-teardown'; workflows/chunk-teardowns.ts);
   * null in histories before, with a zero bound, or when each lane waits for the spend cap's verdict on its task.
   */
  private readonly teardowns: ChunkTeardowns | null;

  constructor(
    private readonly input: ChunkInput,
    private readonly runTask: ActivityInterfaceFor<Activities>['runTask'],
    private readonly progress: Progress,
    /** The spend cap's stop, when this chunk is metered (its spend reported to the parent). */
    private readonly spendStop: ChunkSpendStop | null,
  ) {
    this.results = new Array<TaskResult>(input.tasks.length);
    this.granted = input.lanes !== undefined;
    this.teardowns = this.releasesAtTeardown() ? new ChunkTeardowns(input.settings, progress, (p) => this.kept(p)) : null;
    if (this.pausable) this.handlePause();
    if (!this.granted) return;
    setHandler(revokeLanesSignal, () => {
      this.revokedBelow = this.lanesStarted;
    });
    setHandler(grantLanesSignal, (lanes: number) => {
      const usable = Math.min(lanes, this.left());
      for (let i = 0; i < usable; i++) this.running.push(this.startLane());
      if (lanes > usable) void this.freeLanes(lanes - usable);
    });
  }

  /**
   * Whether a lane may start its next task while its last one's harbor tears down: not when each lane waits for the
   * spend cap's verdict on its last task's spend (known only from Harbor's result.json).
   */
  private releasesAtTeardown(): boolean {
    const waitsForVerdicts = this.spendStop?.verdicts === true;
    return (
      this.settleOnCancel &&
      this.pausable &&
      !waitsForVerdicts &&
      teardownBound(this.input.settings, true) > 0 &&
      patched(LANE_TEARDOWN_PATCH)
    );
  }

  private handlePause(): void {
    setHandler(pauseChunkSignal, ({ stopRunning }) => {
      this.paused = { stopRunning };
      if (!stopRunning) return;
      for (const [scope, task] of this.taskScopes) {
        // A task tearing down has done its work: its harbor finishes, and its row counts.
        if (this.teardowns?.tasks.has(task)) continue;
        this.stoppedByPause.add(scope);
        scope.cancel();
      }
    });
    setHandler(resumeChunkSignal, () => {
      this.paused = null;
    });
  }

  private left = () => this.input.tasks.length - this.next + this.requeued.length;
  private stopped = () => this.spendStop?.reason ?? null;

  /** Starts the lanes this chunk was given, and waits until every lane (granted ones too) has ended. */
  async run(): Promise<void> {
    const { input } = this;
    const initial = Math.min(this.granted ? input.lanes! : input.settings.concurrency, input.tasks.length);
    for (let i = 0; i < initial; i++) this.running.push(this.startLane());
    if (this.granted && input.lanes! > initial) await this.freeLanes(input.lanes! - initial);
    // Lanes granted while others run join `running`; wait until every one of them has ended, and while tasks
    // are left after the parent took every lane back, for the lanes it grants again.
    for (let settled = 0; ; ) {
      const n = this.running.length;
      await Promise.all(this.running.slice(settled, n));
      settled = n;
      if (this.running.length > settled) continue;
      if (this.teardowns && (await this.teardownsSettled(settled))) continue;
      if (this.failure !== null) throw this.failure.err;
      if (this.left() <= 0 || this.stopped() !== null) break;
      await condition(() => this.running.length > settled || this.stopped() !== null);
    }
  }

  /**
   * Waits until every task tearing down has settled; true: lanes started meanwhile (granted, or started again here
   * for a task requeued after every lane had ended), to wait for in turn.
   */
  private async teardownsSettled(settled: number): Promise<boolean> {
    await this.teardowns!.settled();
    const requeuedAlone = !this.granted && this.requeued.length > 0 && this.failure === null && this.stopped() === null;
    if (requeuedAlone && this.running.length === settled) {
      const n = Math.min(this.input.settings.concurrency, this.left());
      for (let k = 0; k < n; k++) this.running.push(this.startLane());
    }
    return this.running.length > settled;
  }

  /**
   * A lane, as `running` holds it. With settleOnCancel its failure is kept (run() throws it once every lane
   * ended): a cancelled chunk ends only after each of its activities' cancellation completed (their harbors
   * stopped). A failure that is not a cancel still ends the chunk at once, as before.
   */
  private startLane(): Promise<void> {
    const lane = this.lane();
    if (!this.settleOnCancel) return lane;
    return this.kept(lane);
  }

  /** A lane's (or a tearing-down task's) promise whose failure is kept; it rejects only with one that is not a cancel. */
  private kept(p: Promise<void>): Promise<void> {
    return p.catch((err: unknown) => {
      this.failure ??= { err };
      if (isCancellation(err)) this.progress.phase = 'cancelling';
      if (!isCancellation(err)) throw err;
    });
  }

  /** After a spend cap stopped the chunk: the rows of the tasks it never started. */
  markNotStarted(): void {
    const why = this.stopped();
    if (why === null) return;
    for (let i = 0; i < this.input.tasks.length; i++) {
      if (this.results[i]) continue;
      this.results[i] = notRunRow(this.input.tasks[i]!, `not started: ${why}`, runPaths(this.input.runDir).jobsDir);
      countFinished(this.progress, this.results[i]!);
    }
  }

  private async lane(): Promise<void> {
    const laneNo = this.lanesStarted++;
    const lastSpend = await this.runLane(laneNo);
    // This chunk has no task left to start (or the parent took the lane back): the lane goes back to the parent,
    // with what its last task spent (so the parent meters it before it can start anything with the lane).
    await this.freeLanes(1, this.left() <= 0, lastSpend ?? undefined);
  }

  private goesOn = (laneNo: number) => this.left() > 0 && laneNo >= this.revokedBelow && this.stopped() === null;

  /** Runs tasks while there are any for this lane; a metered lane returns its last task's spend, not yet reported. */
  private async runLane(laneNo: number): Promise<TaskSpend | null> {
    let lastSpend: TaskSpend | null = null;
    while (this.goesOn(laneNo)) {
      if (this.paused !== null) {
        await condition(() => this.paused === null || !this.goesOn(laneNo));
        continue;
      }
      const i = this.requeued.shift() ?? this.next++;
      this.progress.running++;
      this.showProgress();
      const ran = this.runOne(this.input.tasks[i]!);
      if (await this.releasedAtTeardown(i, ran)) continue;
      let row: TaskResult | null;
      try {
        row = await ran;
      } finally {
        this.progress.running--;
      }
      if (row === null) {
        // Stopped by a pause: it runs again (its job resumed) once the chunk is resumed.
        this.requeued.push(i);
        continue;
      }
      const r = row;
      this.recordRow(i, r);
      if (this.spendStop && r.status !== 'not_run') {
        // A lane that goes on reports now (and, with verdicts, waits until it is metered); one that is freed
        // reports with the lane (lanesFreed).
        if (this.goesOn(laneNo) && this.granted && this.spendStop.verdicts) await this.reportAndAwait(r);
        else if (this.goesOn(laneNo) || !this.granted) this.reportSpend(r);
        else lastSpend = this.spendOf(r);
      }
    }
    return lastSpend;
  }

  /** A finished task's row: in the results, counted, shown, and reported to the parent when it is time. */
  private recordRow(i: number, r: TaskResult): void {
    this.results[i] = r;
    countFinished(this.progress, r);
    this.showProgress();
    if (this.input.reportProgress && this.parentId && reportsProgressAt(this.progress.done, this.input.tasks.length)) this.reportProgress();
  }

  /**
   * Whether task `i`'s harbor has done its work and its lane was released to start the next task while it tears
   * down (with teardowns only); its row is then settled when its activity ends, as any other.
   */
  private async releasedAtTeardown(i: number, ran: Promise<TaskResult | null>): Promise<boolean> {
    const task = this.input.tasks[i]!;
    if (!this.teardowns) return false;
    const stoppedByPause = () => [...this.taskScopes].some(([scope, t]) => t === task && this.stoppedByPause.has(scope));
    if (!(await this.teardowns.released(task, ran, () => this.paused?.stopRunning !== true && !stoppedByPause()))) return false;
    this.progress.running--;
    this.teardowns.aside(task, ran, (row) => this.settleTornDown(i, row));
    this.showProgress();
    return true;
  }

  /** A task that tore down out of its lane, settled: its row recorded and its spend reported, as a lane would. */
  private settleTornDown(i: number, row: TaskResult | null): void {
    if (row === null) {
      this.requeued.push(i); // stopped by a pause before it was released: it runs again once the chunk is resumed
      return;
    }
    this.recordRow(i, row);
    if (this.spendStop && row.status !== 'not_run') this.reportSpend(row);
  }

  /** One task's activity, and its row; null: a pause stopped it (with a pausable chunk only). */
  private async runOne(task: string): Promise<TaskResult | null> {
    if (!this.pausable) return this.runActivity(task);
    const scope = new CancellationScope();
    this.taskScopes.set(scope, task);
    try {
      return await scope.run(() => this.runActivity(task, () => this.requeueStopped && this.stoppedByPause.has(scope)));
    } catch (err) {
      if (stoppedAlone(err, this.stoppedByPause.has(scope))) return null;
      throw err;
    } finally {
      this.taskScopes.delete(scope);
      this.stoppedByPause.delete(scope);
    }
  }

  /**
   * One task's activity, and its row: scored, an error after its attempts, or not run (the grace timer); null: a
   * pause stopped it (`stoppedByPause`), whatever its attempt's failure (a timeout when its worker died meanwhile).
   */
  private async runActivity(task: string, stoppedByPause: () => boolean = () => false): Promise<TaskResult | null> {
    const { input } = this;
    const run = () => this.runTask.executeWithOptions({ summary: `task ${task}` }, [this.taskArgs(task)]);
    const jobDir = taskJobDir(input.runDir, task);
    try {
      return this.spendStop ? await this.spendStop.stoppable(run) : await run();
    } catch (err) {
      if (this.spendStop?.stoppedByGrace(err)) {
        // Stopped by the spend cap's grace period: what its trials spent is not known.
        return notRunRow(task, `stopped after the ${this.spendStop.graceSec}s grace period: ${this.spendStop.reason}`, jobDir);
      }
      return failedTaskRow(err, task, input.settings.taskAttempts, jobDir, stoppedByPause);
    }
  }

  /** What a task's activity is given (with the candidate's source when the chunk has it: any worker can check it out). */
  private taskArgs(task: string): RunTaskInput {
    const { runDir, worktree, settings, agentRepo, home, candidate } = this.input;
    const source = agentRepo && home ? { candidate: { agentRepo, commit: candidate, home } } : {};
    return { runDir, task, worktree, settings, ...(this.teardowns ? { reportsWorkDone: true } : {}), ...source };
  }

  /** A finished task's spend as reported: with its task's name when the chunk says who it is. */
  private spendOf(r: TaskResult): TaskSpend {
    return { ...spendOfTask(r.usage), ...(this.sender ? { task: r.task } : {}) };
  }

  private reportAndAwait(r: TaskResult): Promise<void> {
    return this.spendStop!.reportAndAwait((seq) =>
      getExternalWorkflowHandle(this.parentId!)
        .signal(taskSpentSignal, { chunkIndex: this.input.chunkIndex, ...this.spendOf(r), seq, ...this.sender })
        .then(
          () => true,
          () => false, // the parent is gone: nobody meters any more
        ),
    );
  }

  /** The chunk's page in the Web UI: its progress (a query-served field, no command). */
  private showProgress(): void {
    setCurrentDetails(progressDetails(this.progress));
  }

  /** The parent's page shows the evaluation's progress: this chunk's counts so far go to it. */
  private reportProgress(): void {
    const { done, running, scored, errors, scoreSum, notRun, tearingDown } = this.progress;
    void getExternalWorkflowHandle(this.parentId!)
      .signal(chunkProgressSignal, {
        chunkIndex: this.input.chunkIndex,
        done,
        running,
        scored,
        errors,
        scoreSum,
        ...(notRun ? { notRun } : {}),
        ...(tearingDown ? { tearingDown } : {}),
      })
      .catch(() => undefined); // the parent is gone: nobody shows it
  }

  private reportSpend(r: TaskResult): void {
    void getExternalWorkflowHandle(this.parentId!)
      .signal(taskSpentSignal, { chunkIndex: this.input.chunkIndex, ...this.spendOf(r), ...this.sender })
      .catch(() => undefined); // the parent is gone: nobody meters any more
  }

  private async freeLanes(lanes: number, drained = true, spent?: TaskSpend): Promise<void> {
    if (!this.granted || !this.parentId || lanes < 1) return;
    await getExternalWorkflowHandle(this.parentId)
      .signal(lanesFreedSignal, {
        chunkIndex: this.input.chunkIndex,
        lanes,
        ...(drained ? {} : { drained: false }),
        ...(spent ? { spent } : {}),
        ...(this.sender ? { chunkRunId: this.sender.chunkRunId } : {}),
      })
      .catch(() => undefined); // the parent is gone: nobody needs the lane
  }
}
