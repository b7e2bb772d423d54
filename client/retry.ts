/**
 * `vero retry`: run chosen tasks of a finished evaluation again (model/evaluation/retry.ts). Durable design: a new run of the
 * same workflow id (Temporal keeps the old run and its history) whose input is the previous run's, with `tasks`
 * the chosen ones and `retryOf` naming the result file; it runs them in a run dir of its own (fresh Harbor jobs;
 * the old ones are kept) and its finalize replaces their rows in the result file, written atomically. The
 * workflow's result is the whole evaluation's, each retried row saying when and what it replaced. A running
 * evaluation queues the retry instead (an update) and continues as new into that run once its tasks finish.
 */
import { Client, type WorkflowExecutionDescription, WorkflowUpdateFailedError } from '@temporalio/client';
import { ConfigError } from '../model/errors';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { EvalInput } from '../model/evaluation/input';
import { anotherRetryRunning, chooseRetryTasks } from '../model/evaluation/retry';
import { startOrAttach } from './eval-start';
import { rowsOfRun } from './run-rows';
import { withTasks } from './eval-results';
import { requireEvalId, requireEvaluationType } from './eval-id';
import { requireWorker, withinAcceptBound } from './worker-wait';
import { retryRunningUpdate } from '../workflows/retry-running';

/** What `vero retry` started. */
export interface RetryStarted {
  evalId: string;
  /** The new run of the evaluation's workflow (null: queued in a running one), and the one whose rows it retries. */
  runId: string | null;
  previousRunId: string;
  tasks: string[];
  requestedAt: string;
  /**
   * A running evaluation: the retry is queued (an update recorded in its history) and runs once every task has
   * finished, as the run that follows; `errors`: its error rows then are retried too. Absent for a finished one.
   */
  queued?: { errors: boolean };
}

/** The input of the evaluation's current run, from the first event of its history. */
async function inputOf(client: Client, evalId: string, runId: string): Promise<EvalInput> {
  const history = await client.workflow.getHandle(evalId, runId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const value = payload ? client.options.loadedDataConverter.payloadConverter.fromPayload(payload) : undefined;
  const parsed = EvalInput.safeParse(value);
  if (!parsed.success) throw new ConfigError(`${evalId}: its run ${runId} has no evaluation input to retry from`);
  return parsed.data;
}

/**
 * Queues chosen tasks of a running evaluation to run again once its tasks have finished (workflows/retry-running.ts).
 * Refused (ConfigError) with the workflow's reason: names that are not its tasks, or it is finishing.
 */
async function queueInRunning(
  client: Client,
  evalId: string,
  runId: string,
  opts: { tasks?: string[]; errors?: boolean },
): Promise<RetryStarted> {
  const requestedAt = new Date().toISOString();
  try {
    const queued = await client.workflow.getHandle(evalId, runId).executeUpdate(retryRunningUpdate, {
      args: [{ ...(opts.tasks ? { tasks: opts.tasks } : {}), errors: opts.errors === true, requestedAt }],
    });
    return {
      evalId,
      runId: null,
      previousRunId: runId,
      tasks: queued.tasks,
      requestedAt: queued.requestedAt,
      queued: { errors: queued.errors },
    };
  } catch (e) {
    if (e instanceof WorkflowUpdateFailedError) throw new ConfigError(`${evalId}: ${e.cause?.message ?? e.message}`);
    throw e;
  }
}

/**
 * The rows of a finished evaluation's result, to choose from: inline, else its result file on this host, else
 * gathered from Temporal (client/run-rows.ts); refused when none has them.
 */
async function rowsToRetry(
  client: Client,
  evalId: string,
  runId: string,
  previous: CandidateResult,
): Promise<NonNullable<CandidateResult['tasks']>> {
  const rows = previous.tasks ?? (await rowsOfRun(client, evalId, runId))?.tasks;
  if (rows) return rows;
  throw new ConfigError(
    `${evalId}: its ${previous.nTasks} rows are neither in Temporal nor in its result file ${previous.resultFile} on this host`,
  );
}

/**
 * Two `vero retry` at once: both saw the evaluation finished, and the start of the second found the first's run
 * (the workflow id's running run is used): that run is not this retry's, so it is refused, naming the other.
 */
async function refuseAnotherRetry(client: Client, evalId: string, runId: string, requestedAt: string): Promise<void> {
  const running = await inputOf(client, evalId, runId);
  if (running.retryOf?.requestedAt !== requestedAt) throw new ConfigError(`${evalId}: ${anotherRetryRunning(running.tasks)}`);
}

/** Only an evaluation, and one a worker serves: a retry nothing would run is refused, not left waiting. */
async function requireServed(client: Client, evalId: string, d: WorkflowExecutionDescription): Promise<void> {
  requireEvaluationType(evalId, d.type, 'retry');
  if (d.status.name === 'RUNNING' || d.status.name === 'COMPLETED') await requireWorker(client, d.taskQueue, 'retry');
}

/**
 * Starts a run of the chosen tasks (`tasks` by name, and with `errors` every error row) of a finished evaluation,
 * or queues them in a running one (they run once its tasks have finished). Refused (ConfigError) when it did not
 * complete, and for names that are not its tasks.
 */
export async function retryTasks(client: Client, evalId: string, opts: { tasks?: string[]; errors?: boolean }): Promise<RetryStarted> {
  requireEvalId(evalId, 'retry');
  const handle = client.workflow.getHandle(evalId);
  const d = await handle.describe();
  await requireServed(client, evalId, d);
  if (d.status.name === 'RUNNING') return withinAcceptBound(client, 'retry', evalId, () => queueInRunning(client, evalId, d.runId, opts));
  if (d.status.name !== 'COMPLETED')
    throw new ConfigError(`${evalId} ended ${d.status.name} without a result: start it again (vero start-eval --force)`);
  const previous = withTasks((await handle.result()) as CandidateResult);
  const tasks = chooseRetryTasks(await rowsToRetry(client, evalId, d.runId, previous), opts);
  if (!tasks.length) throw new ConfigError(`${evalId}: no task to retry (it has no error rows)`);
  const input = await inputOf(client, evalId, d.runId);
  const requestedAt = new Date().toISOString();
  const retry: EvalInput = { ...input, tasks, retryOf: { resultFile: previous.resultFile, previousRunId: d.runId, requestedAt } };
  const started = await startOrAttach(client, retry, d.taskQueue, true);
  const runId = (await started.handle.describe()).runId;
  await refuseAnotherRetry(client, evalId, runId, requestedAt);
  return { evalId, runId, previousRunId: d.runId, tasks, requestedAt };
}
