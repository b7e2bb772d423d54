/**
 * The evaluation client: connect, build a workflow input from a config (settings default from the schema),
 * start or attach, follow progress, read results, list and rank evaluations. The CLI, the sidecar, bench/ and
 * the tests all go through it.
 */
import * as fs from 'node:fs';
import {
  Client,
  Connection,
  ServiceError,
  WorkflowExecutionDescription,
  WorkflowFailedError,
  WorkflowHandle,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { type SpendCap, spendPoolWorkflowId } from '../model/spend-cap';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { parseWorkerIdentity } from '../model/worker-identity';
import { DEFAULT_EXECUTION, type EvalConfig } from '../model/eval-config';
import { configDigest, evalWorkflowId } from '../model/eval-identity';
import { CandidateResult, EvalInput, EvalSettings, Progress } from '../model/eval-types';
import { ConfigError, TemporalUnreachableError } from '../model/errors';
import { chunksPerRun, inputSizeProblem } from '../model/history-bounds';
import { git, isGitRepo, resolveCommit } from '../infra/git';
import { checkHome } from '../infra/home-dir';
import { connectionExtrasFromEnv } from '../infra/temporal-connection';
import {
  VeroCandidate,
  VeroConfigDigest,
  VeroCostUsd,
  VeroScore,
  VeroStatus,
  veroStatus,
  VeroTaskSource,
} from '../model/search-attributes';
import { resolveTaskSelection } from '../infra/task-source';
import {
  evaluateCandidate,
  progressQuery,
  setConcurrencyUpdate,
  spendPool,
  spendPoolQuery,
  type ConcurrencyChange,
  type SpendPoolState,
} from '../workflows';

export { TemporalUnreachableError };

export async function connect(address: string, namespace: string): Promise<Client> {
  const extras = connectionExtrasFromEnv(); // bad TLS settings are a config error, not "unreachable"
  try {
    const connection = await Connection.connect({ address, connectTimeout: 5000, ...extras });
    await connection.workflowService.getSystemInfo({});
    return new Client({ connection, namespace });
  } catch (e) {
    throw new TemporalUnreachableError(
      `cannot reach the Temporal server at ${address} (${(e as Error).message.split('\n')[0]}); start one with \`vero dev\` or set temporal.address / --address`,
    );
  }
}

export function settingsFrom(cfg: EvalConfig): EvalSettings {
  return {
    harbor: cfg.harbor,
    source: cfg.tasks.source,
    rewardKey: cfg.scoring.reward_key ?? null,
    aggregate: cfg.scoring.aggregate,
    errorRateThreshold: cfg.scoring.error_rate_threshold,
    concurrency: cfg.execution.concurrency,
    taskTimeoutSec: cfg.execution.task_timeout,
    taskAttempts: cfg.execution.task_attempts,
    heartbeatTimeoutSec: cfg.execution.heartbeat_timeout,
    chunkSize: cfg.execution.chunk_size,
    ...(cfg.execution.chunks_per_run !== undefined ? { chunksPerRun: cfg.execution.chunks_per_run } : {}),
    stopGraceSec: cfg.execution.stop_grace,
    preflight: cfg.execution.preflight,
    ...spendCapFrom(cfg.execution),
  };
}

function spendCapFrom(e: EvalConfig['execution']): Pick<EvalSettings, 'spendCap'> {
  if (e.max_cost_usd === undefined && e.max_tokens === undefined) return {};
  return {
    spendCap: {
      ...(e.max_cost_usd !== undefined ? { maxCostUsd: e.max_cost_usd } : {}),
      ...(e.max_tokens !== undefined ? { maxTokens: e.max_tokens } : {}),
      ...(e.budget_grace !== undefined ? { graceSec: e.budget_grace } : {}),
      ...(e.spend_pool !== undefined ? { pool: e.spend_pool } : {}),
    },
  };
}

/** The `execution:` settings a caller without a vero.yaml gets (the schema's defaults). */
export { DEFAULT_EXECUTION };

/** The workflow input for a commit, tasks and settings: its id is the commit plus the digest of tasks and settings. */
export function evalInputFor(parts: {
  commit: string;
  candidateRef: string;
  agentRepo: string;
  home: string;
  tasks: string[];
  settings: EvalSettings;
  skippedDirs?: EvalInput['skippedDirs'];
}): EvalInput {
  const problem = inputSizeProblem(parts.tasks);
  if (problem) throw new ConfigError(`tasks: ${problem}`);
  // Chunks per run are fixed when the evaluation starts, so a later change of the default cannot change how a
  // running evaluation replays.
  const s = parts.settings;
  const metered = s.spendCap ? { chunkSize: s.chunkSize, pooled: s.spendCap.pool !== undefined } : undefined;
  const settings = { ...s, chunksPerRun: s.chunksPerRun ?? chunksPerRun(s.concurrency, undefined, metered) };
  const digest = configDigest(parts.tasks, settings);
  return EvalInput.parse({
    evalId: evalWorkflowId(parts.commit, digest),
    candidate: parts.commit,
    candidateRef: parts.candidateRef,
    agentRepo: parts.agentRepo,
    home: parts.home,
    tasks: parts.tasks,
    configDigest: digest,
    settings,
    ...(parts.skippedDirs ? { skippedDirs: parts.skippedDirs } : {}),
  });
}

/** Validates everything that can be checked before starting (home, repo, candidate, tasks); the workflow input. */
export async function prepareEvalInput(cfg: EvalConfig, candidateRef: string): Promise<EvalInput> {
  checkHome(cfg.home);
  if (!(await isGitRepo(cfg.agent_repo))) throw new ConfigError(`agent_repo: ${cfg.agent_repo} does not exist or is not a git repository`);
  const commit = await resolveCommit(cfg.agent_repo, candidateRef);
  if (!commit) throw new ConfigError(`--candidate: "${candidateRef}" is not a commit of ${cfg.agent_repo}`);
  const { tasks, skipped } = resolveTaskSelection(cfg);
  return evalInputFor({
    commit,
    candidateRef,
    agentRepo: cfg.agent_repo,
    home: cfg.home,
    tasks,
    settings: settingsFrom(cfg),
    skippedDirs: skipped,
  });
}

/**
 * A note when the candidate is the commit checked out in the agent repo and that checkout has uncommitted
 * changes to tracked files: what is evaluated is the commit, not the edits (null otherwise, or not a work tree).
 */
export async function uncommittedNote(agentRepo: string, candidateRef: string, commit: string): Promise<string | null> {
  try {
    if ((await git(['rev-parse', 'HEAD'], { cwd: agentRepo })) !== commit) return null;
    const changed = (await git(['status', '--porcelain', '--untracked-files=no'], { cwd: agentRepo })).split('\n').filter(Boolean);
    if (!changed.length) return null;
    return `note: ${agentRepo} has uncommitted changes to ${changed.length} file(s); the committed ${candidateRef} (${commit.slice(0, 12)}) is what is evaluated, not your edits: commit them to evaluate them`;
  } catch {
    return null; // a bare repo or a URL: nothing checked out
  }
}

export interface StartOutcome {
  handle: WorkflowHandle<typeof evaluateCandidate>;
  /** started: a new run; attached: joined a running one; existing: returned a completed one. */
  mode: 'started' | 'attached' | 'existing';
  /**
   * The home of the evaluation attached to, when it is not this config's (`home` is operational, so it is not
   * part of the evaluation id): its files are there.
   */
  otherHome?: string;
}

async function describe(client: Client, id: string): Promise<WorkflowExecutionDescription | null> {
  try {
    return await client.workflow.getHandle(id).describe();
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return null;
    throw e;
  }
}

/** Starts the evaluation, or attaches to the running one, or returns the completed one (unless `force`). */
export async function startOrAttach(client: Client, input: EvalInput, taskQueue: string, force = false): Promise<StartOutcome> {
  const prev = await describe(client, input.evalId);
  const prevHome = typeof prev?.memo?.home === 'string' ? prev.memo.home : undefined;
  const otherHome = prevHome !== undefined && prevHome !== input.home ? { otherHome: prevHome } : {};
  if (prev?.status.name === 'RUNNING') return { handle: client.workflow.getHandle(input.evalId), mode: 'attached', ...otherHome };
  if (prev?.status.name === 'COMPLETED' && !force)
    return { handle: client.workflow.getHandle(input.evalId), mode: 'existing', ...otherHome };
  if (input.settings.spendCap?.pool) await ensureSpendPool(client, input.settings.spendCap, taskQueue);
  const source = input.settings.source.path ?? input.settings.source.dataset ?? '';
  const handle = await client.workflow.start(evaluateCandidate, {
    workflowId: input.evalId,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    memo: { home: input.home, candidateRef: input.candidateRef },
    typedSearchAttributes: [
      { key: VeroCandidate, value: input.candidate },
      veroStatus('queued'),
      { key: VeroTaskSource, value: source },
      { key: VeroConfigDigest, value: input.configDigest },
    ],
    staticSummary: `candidate ${input.candidateRef} (${input.candidate.slice(0, 12)}) on ${input.tasks.length} task(s)`.slice(0, 200),
    staticDetails: [
      `**candidate** \`${input.candidate}\` (${input.candidateRef})`,
      `**tasks** ${input.tasks.length} from \`${source}\``,
      `**agent** \`${input.settings.harbor.agent}\`${input.settings.harbor.model ? ` model \`${input.settings.harbor.model}\`` : ''}, attempts ${input.settings.harbor.n_attempts}, retries ${input.settings.harbor.max_retries}`,
    ].join('\n\n'),
  });
  return { handle, mode: 'started' };
}

const capWords = (c: { maxCostUsd?: number | null; maxTokens?: number | null }) =>
  [...(c.maxCostUsd != null ? [`max_cost_usd ${c.maxCostUsd}`] : []), ...(c.maxTokens != null ? [`max_tokens ${c.maxTokens}`] : [])].join(
    ', ',
  );

/**
 * Starts the spend pool an evaluation names, or checks that the running one has the same caps (its memo), so a
 * batch cannot draw on one pool with two different caps. A pool that has ended (its cap reached, no member
 * left) is closed: starting an evaluation on it is refused, with what it spent.
 */
export async function ensureSpendPool(client: Client, cap: SpendCap, taskQueue: string): Promise<void> {
  const name = cap.pool!;
  const workflowId = spendPoolWorkflowId(name);
  const caps = { maxCostUsd: cap.maxCostUsd ?? null, maxTokens: cap.maxTokens ?? null };
  try {
    await client.workflow.start(spendPool, {
      workflowId,
      taskQueue,
      args: [
        {
          name,
          ...(cap.maxCostUsd !== undefined ? { maxCostUsd: cap.maxCostUsd } : {}),
          ...(cap.maxTokens !== undefined ? { maxTokens: cap.maxTokens } : {}),
        },
      ],
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      memo: caps,
      staticSummary: `spend pool ${name}: ${capWords(caps)}`,
    });
  } catch (e) {
    if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    const ended = (await client.workflow
      .getHandle(workflowId)
      .result()
      .catch(() => null)) as SpendPoolState | null;
    throw new ConfigError(
      `execution.spend_pool: spend pool "${name}" has ended${ended?.reached ? ` (${ended.reached})` : ''}; name a new pool to spend more`,
    );
  }
  const memo = (await client.workflow.getHandle(workflowId).describe()).memo ?? {};
  if ((memo.maxCostUsd ?? null) !== caps.maxCostUsd || (memo.maxTokens ?? null) !== caps.maxTokens) {
    throw new ConfigError(
      `execution.spend_pool: spend pool "${name}" has ${capWords(memo as typeof caps) || 'no caps'}; this config says ${capWords(caps)} (one pool, one cap: use the same caps or another pool)`,
    );
  }
}

/** The state of a spend pool (its totals, members and caps), from its workflow: a query while it runs, else its result. */
export async function spendPoolState(client: Client, name: string): Promise<SpendPoolState> {
  const handle = client.workflow.getHandle(spendPoolWorkflowId(name));
  const d = await handle.describe();
  return d.status.name === 'RUNNING' ? handle.query(spendPoolQuery) : ((await handle.result()) as SpendPoolState);
}

/** A failure that means the server could not be asked (down, restarting, unreachable), not that it said no. */
function serverOutage(e: unknown): boolean {
  if (e instanceof WorkflowFailedError || e instanceof WorkflowNotFoundError) return false;
  if (e instanceof ServiceError) return true;
  const code = (e as { code?: unknown }).code;
  return code === 14 || code === 4; // gRPC UNAVAILABLE, DEADLINE_EXCEEDED
}

/**
 * The evaluation's result, waiting through server outages: a restart of the Temporal server must not turn a
 * running (or succeeded) evaluation into "failed" for the client. `onOutage` hears about each retry.
 */
export async function awaitResult(client: Client, evalId: string, onOutage?: (message: string) => void): Promise<CandidateResult> {
  for (let waitMs = 1_000; ; waitMs = Math.min(waitMs * 2, 30_000)) {
    try {
      return (await client.workflow.getHandle(evalId).result()) as CandidateResult;
    } catch (e) {
      if (!serverOutage(e)) throw e;
      onOutage?.(`waiting for the Temporal server (${(e as Error).message.split('\n')[0]}); asking again in ${waitMs / 1000}s`);
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}

/** Progress of an evaluation: the parent's counts (finished chunks) plus those of its running chunks. */
/**
 * Changes the concurrency of a running evaluation (a Temporal update, validated by the workflow and recorded in
 * its history). Resolves once the new value is in force: after lowering, no task starts until fewer than
 * `concurrency` run. Throws ConfigError when the workflow refuses (finished, started before lane grants).
 */
export async function setConcurrency(client: Client, evalId: string, concurrency: number): Promise<ConcurrencyChange> {
  const handle = client.workflow.getHandle<typeof evaluateCandidate>(evalId);
  const d = await handle.describe();
  if (d.status.name !== 'RUNNING') throw new ConfigError(`${evalId} has finished (${d.status.name}); its concurrency cannot change`);
  try {
    return await handle.executeUpdate(setConcurrencyUpdate, { args: [concurrency] });
  } catch (e) {
    if (e instanceof WorkflowUpdateFailedError) throw new ConfigError(`${evalId} refused: ${(e.cause ?? e).message}`);
    throw e;
  }
}

export async function getProgress(client: Client, evalId: string): Promise<Progress> {
  const p = await client.workflow.getHandle(evalId).query(progressQuery);
  const chunks = p.runningChunks ?? (p.currentChunk ? [p.currentChunk] : []);
  const total = { ...p, running: chunks.length ? 0 : p.running };
  for (const id of chunks) {
    try {
      const c = await client.workflow.getHandle(id).query(progressQuery);
      total.done += c.done;
      total.running += c.running;
      total.scored += c.scored;
      total.errors += c.errors;
      total.scoreSum += c.scoreSum;
      if (c.notRun) total.notRun = (total.notRun ?? 0) + c.notRun;
    } catch {
      /* the chunk is starting or just finished */
    }
  }
  return total;
}

export interface EvalListing {
  evalId: string;
  candidate: string | null;
  /** The ref the candidate was started as (a tag, a branch, HEAD), when its start recorded it. */
  candidateRef: string | null;
  status: string;
  score: number | null;
  /** Harbor's cost_usd summed over the evaluation's trials, when any trial reported it. */
  costUsd: number | null;
  workflowStatus: string;
  startedAt: Date;
  /** When the workflow closed (null while it runs). */
  finishedAt: Date | null;
}

/** Evaluations from visibility; `configDigest` keeps only those evaluated the same way (comparable scores). */
/** Every evaluation (paged through visibility, 200 at a time), or the first `limit`, newest first. */
export async function listEvaluations(client: Client, opts: { limit?: number; configDigest?: string } = {}): Promise<EvalListing[]> {
  const limit = opts.limit ?? Infinity;
  const out: EvalListing[] = [];
  const digestFilter = opts.configDigest ? ` AND VeroConfigDigest = '${opts.configDigest.replace(/[^0-9a-f]/g, '')}'` : '';
  // A large evaluation continues as new every few hundred chunks: list each once, by its current run.
  const query = `WorkflowType = 'evaluateCandidate' AND ExecutionStatus != 'ContinuedAsNew'${digestFilter}`;
  // One row per evaluation: an id re-run (--force) or reset has more than one closed run; the newest is listed.
  const seen = new Set<string>();
  for await (const w of client.workflow.list({ query, pageSize: 200 })) {
    if (seen.has(w.workflowId)) continue;
    seen.add(w.workflowId);
    const sa = w.typedSearchAttributes;
    out.push({
      evalId: w.workflowId,
      candidate: sa.get(VeroCandidate) ?? null,
      candidateRef: typeof w.memo?.candidateRef === 'string' ? w.memo.candidateRef : null,
      status: sa.get(VeroStatus) ?? w.status.name.toLowerCase(),
      score: sa.get(VeroScore) ?? null,
      costUsd: sa.get(VeroCostUsd) ?? null,
      workflowStatus: w.status.name,
      startedAt: w.startTime,
      finishedAt: w.closeTime ?? null,
    });
    if (out.length >= limit) break;
  }
  return out;
}

/** The full result: the per-task rows come from the result file when the payload left them out (large evaluations). */
export function withTasks(r: CandidateResult): CandidateResult {
  if (r.tasks || !fs.existsSync(r.resultFile)) return r;
  return { ...r, tasks: (JSON.parse(fs.readFileSync(r.resultFile, 'utf8')) as CandidateResult).tasks };
}

/** The best completed evaluation (not a spend cap's partial one): highest score, then fewer errors, then earlier start, then id. */
export function pickBest(results: CandidateResult[]): CandidateResult | null {
  // A spend cap's partial evaluation scores only the tasks it ran: not comparable, not ranked.
  const ranked = results
    .filter((r) => r.status !== 'budget_exhausted')
    .sort(
      (a, b) => b.score - a.score || a.nErrors - b.nErrors || a.startedAt.localeCompare(b.startedAt) || a.evalId.localeCompare(b.evalId),
    );
  return ranked[0] ?? null;
}

export function uiLink(uiBase: string | null, namespace: string, workflowId: string): string | null {
  return uiBase
    ? `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`
    : null;
}

/** How many workers poll a task queue for workflow tasks (a query or a new step needs one). */
export async function workflowPollers(client: Client, taskQueue: string): Promise<number> {
  const r = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return new Set((r.pollers ?? []).map((p) => p.identity ?? '')).size;
}

/**
 * Why a running evaluation may not be moving, from what Temporal knows: each of its activities that is being
 * retried after a failure (the preflight's reason when Docker is down, say), with its attempt and last failure.
 */
export function retryingActivities(d: WorkflowExecutionDescription): string[] {
  return (d.raw.pendingActivities ?? []).flatMap((a) => {
    const message = a.lastFailure?.message?.split('\n')[0];
    return message ? [`${a.activityType?.name ?? 'an activity'} is retrying (attempt ${a.attempt ?? '?'}): ${message}`] : [];
  });
}

/** An evaluation's progress, or null when no worker could answer within `timeoutMs` (none polls, or it is busy). */
export async function progressIfAnswered(client: Client, evalId: string, timeoutMs = 10_000): Promise<Progress | null> {
  try {
    return await client.connection.withDeadline(Date.now() + timeoutMs, () => getProgress(client, evalId));
  } catch {
    return null;
  }
}

export interface QueueCapacity {
  /** Distinct workers polling the queue for activities (Temporal keeps a poller listed for a few minutes). */
  workers: number;
  /** Their activity slots summed; null when a worker's identity does not say (not a vero worker). */
  slots: number | null;
}

/** How many harbor runs the workers polling `taskQueue` can run at once (from their identities). */
export async function queueCapacity(client: Client, taskQueue: string): Promise<QueueCapacity> {
  const r = await client.workflowService.describeTaskQueue({
    namespace: client.options.namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  const identities = [...new Set((r.pollers ?? []).map((p) => p.identity ?? ''))];
  const slots = identities.map((i) => parseWorkerIdentity(i).slots);
  return { workers: identities.length, slots: slots.some((s) => s === null) ? null : slots.reduce<number>((a, s) => a + s!, 0) };
}

/** A note when the evaluation's concurrency is more than the workers can run (null when they can, or cannot tell). */
export function capacityNote(concurrency: number, taskQueue: string, cap: QueueCapacity): string | null {
  if (cap.workers === 0) return `note: no worker is polling ${taskQueue} yet; nothing runs until one does (vero worker, or vero dev)`;
  if (cap.slots === null || cap.slots >= concurrency) return null;
  return `note: concurrency ${concurrency}, but the ${cap.workers} worker(s) polling ${taskQueue} run at most ${cap.slots} task(s) at once; start more workers or raise --max-concurrent-tasks`;
}
