/**
 * One runTask attempt's context: the job's files, harbor's argv and environment, and the attempt's duties
 * toward its workflow and the host (heartbeats, the host's record of its harbor group, Docker cleanup after a
 * stop). The steps of runTask (activities/run-task.ts, launch.ts) share it. Temporal is the activity's: it hands
 * the attempt its hooks (AttemptHooks), and harbor/ imports nothing of Temporal's.
 */
import type { Deployment } from '../infra/deployment';
import { hostId, recordGroup } from '../infra/host-groups';
import { tail } from '../infra/file-tail';
import type { EvalSettings } from '../model/evaluation/input';
import type { RunTaskInput } from '../model/evaluation/activity-payloads';
import { jobNameFor } from '../model/harbor/job-name';
import { runPaths } from '../model/paths';
import { removeJobLeftovers } from '../infra/docker';
import { countTrialResults, orphanLeft, previousHarborFailures, writeHarborFailures, type AttemptProgress } from './orphans';
import { type HarborInvocation, taskInvocation } from './invocation';
import { DEFAULT_STOP_GRACE_SEC } from './process-env';
import { usesLocalDocker } from '../model/harbor/config';
import { TEMPORAL_DEFAULTS } from '../model/evaluation/config';
import type { TaskWorkDone } from '../model/evaluation/lane-teardown';
import { workDone } from './work-done';

type LogFn = (message: string, meta?: Record<string, unknown>) => void;
type AttemptWorkflow = { workflowExecution?: { workflowId: string; runId: string } };

/** What the activity hands an attempt, from Temporal's activity context (activities/run-task.ts attemptHooks). */
export interface AttemptHooks {
  readonly info: { attempt: number; activityId: string; heartbeatDetails?: unknown; workflowNamespace?: string } & AttemptWorkflow;
  heartbeat(details: AttemptProgress): void;
  /** Aborted when the attempt is cancelled (or timed out, or its worker shuts down); then, why. */
  readonly cancellationSignal: AbortSignal;
  readonly cancellationDetails: { timedOut?: boolean; notFound?: boolean; workerShutdown?: boolean } | undefined;
  /** Sleeps; rejects with the cancellation when the attempt is cancelled. */
  sleep(ms: number): Promise<void>;
  readonly log: { info: LogFn; warn: LogFn };
  /** The error an aborted attempt ends with when the signal carries no reason of its own. */
  cancelled(message: string): unknown;
  /** Tells the attempt's workflow that the task's harbor has done its work. */
  signalWorkDone(done: TaskWorkDone): Promise<void>;
}

export class TaskAttempt {
  readonly attempt: number;
  readonly s: EvalSettings;
  readonly paths: ReturnType<typeof runPaths>;
  readonly jobName: string;
  readonly jobDir: string;
  readonly logFile: string;
  readonly pidFile: string;
  readonly failuresFile: string;
  /** What trials removed before a retry spent (orphans.ts): the row meters every trial that ran. */
  readonly prunedUsageFile: string;
  readonly graceMs: number;
  readonly env: Record<string, string>;
  /** harbor's argv, working dir and environment (the preflight's, without `--dry-run`). */
  readonly invocation: HarborInvocation;
  /** Things the user should know about how the row came to be. */
  readonly notes: string[] = [];
  harborFailures: number;

  constructor(
    readonly input: RunTaskInput,
    readonly ctx: AttemptHooks,
    private readonly deployment?: Deployment,
  ) {
    this.attempt = ctx.info.attempt;
    this.s = input.settings;
    this.paths = runPaths(input.runDir);
    this.jobName = jobNameFor(input.task);
    const job = this.paths.job(this.jobName);
    this.jobDir = job.dir;
    this.logFile = job.harborLog;
    this.pidFile = job.pidFile;
    this.failuresFile = job.failuresFile;
    this.prunedUsageFile = job.prunedUsageFile;
    this.graceMs = (this.s.stopGraceSec ?? DEFAULT_STOP_GRACE_SEC) * 1000;
    this.invocation = taskInvocation(this.s, input.runDir, input.worktree, input.task);
    this.env = this.invocation.env;
    this.harborFailures = previousHarborFailures(this.ctx.info.heartbeatDetails, this.failuresFile);
  }

  get task(): string {
    return this.input.task;
  }

  /** Each second at most: the worker sends one every HEARTBEAT_THROTTLE, and a cancel arrives with its answer. */
  heartbeatEveryMs(): number {
    return Math.max(200, Math.min(1_000, (this.s.heartbeatTimeoutSec * 1000) / 4));
  }

  beat = (): void => {
    this.ctx.heartbeat({
      attempt: this.attempt,
      trialsWithResults: countTrialResults(this.jobDir),
      harborFailures: this.harborFailures,
    } satisfies AttemptProgress);
    this.reportWorkDone();
  };

  /** Whether this attempt told its workflow that the task's harbor has done its work. */
  private workDoneReported = false;

  /**
   * Once every trial of the job has passed its verifier (harbor/work-done.ts), tells the workflow (`taskWorkDone`,
   * once per attempt) so the task's lane can start the next task while harbor tears down; this activity goes on
   * watching harbor to its exit, and the row comes from its results as before.
   */
  private reportWorkDone(): void {
    if (
      !this.input.reportsWorkDone ||
      !this.ctx.info.workflowExecution ||
      this.workDoneReported ||
      !workDone(this.jobDir, this.s.harbor.n_attempts)
    )
      return;
    this.workDoneReported = true;
    const unsaid = (e: unknown) =>
      this.ctx.log.warn('could not tell the workflow that harbor has done its work (the task keeps its lane)', {
        task: this.task,
        error: String(e),
      });
    this.ctx.signalWorkDone({ task: this.task }).catch(unsaid); // (no client in this activity's context, say)
  }

  /**
   * Not every abort is a cancel. The server timed this attempt out, or no longer knows it (heartbeats lost in
   * a server outage longer than heartbeat_timeout: the attempt was retried meanwhile), or this worker is
   * shutting down (Ctrl-C, SIGTERM): another attempt will run, so harbor is left running for it to adopt rather
   * than its trials thrown away (if none does, the host's orphan reaper stops it). Only a real cancel, or the
   * task timeout, stops it here.
   */
  leaveForNextAttempt = (): boolean => {
    const d = this.ctx.cancellationDetails;
    return d?.timedOut === true || d?.notFound === true || d?.workerShutdown === true;
  };

  abortWhy(): string {
    const d = this.ctx.cancellationDetails;
    return d?.workerShutdown
      ? 'this worker is shutting down'
      : d?.notFound
        ? 'the server no longer knows this attempt'
        : 'the server timed the attempt out';
  }

  /** The error this attempt ends with when it was aborted. */
  aborted(fallback: string): unknown {
    return this.ctx.cancellationSignal.reason ?? this.ctx.cancelled(fallback);
  }

  /** This host's record of the group (worker/orphan-reaper.ts stops groups whose owner died and that no attempt adopts). */
  record(pid: number, startedAt: number, ownerPid = process.pid): void {
    recordGroup({
      pid,
      host: hostId(),
      ownerPid,
      namespace: this.ctx.info.workflowNamespace ?? TEMPORAL_DEFAULTS.namespace,
      ...(this.deployment ? { deployment: this.deployment } : {}),
      workflowId: this.ctx.info.workflowExecution?.workflowId ?? '',
      activityId: this.ctx.info.activityId,
      attempt: this.attempt,
      jobDir: this.jobDir,
      pidFile: this.pidFile,
      startedAt,
    });
    if (ownerPid === 0) orphanLeft(); // left for a next attempt: the reaper looks whether one will come
  }

  /** What stopped trials left in local Docker (containers, networks, volumes), removed. */
  async cleanUp(why: string): Promise<void> {
    if (!usesLocalDocker(this.s.harbor.environment)) return;
    const removed = await removeJobLeftovers(this.jobDir, { ...(process.env as Record<string, string>), ...this.env });
    const n = Object.values(removed).reduce((a, l) => a + l.length, 0);
    if (n) this.ctx.log.warn(`removed Docker leftovers of stopped trials (${why})`, { task: this.task, ...removed });
  }

  logTail(): string {
    return tail(this.logFile, 1500).trim();
  }

  /** A harbor run that produced no rewarded trial: counted against `task_attempts`, on disk and in the heartbeat. */
  countHarborFailure(): void {
    this.harborFailures += 1;
    writeHarborFailures(this.failuresFile, this.harborFailures);
    this.beat();
  }
}
