/**
 * The optimizer's evaluations (`POST /eval`): each checked, charged and run in order — tier gate, samples,
 * commit, read-only paths, then a durable reservation (refunded only for an early-stopped evaluation's unrun
 * cases), the evaluation (sidecar/early-stop-eval.ts), the registry entry and
 * what the agent may see of it. Those in flight are tracked so finalize can wait for them (the optimizer's last
 * candidate may be its best); once finalize has begun, none is accepted.
 */
import { randomUUID } from 'node:crypto';
import { CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import { transferCommit } from './commit-transfer';
import { conflict, notEvaluable } from './errors';
import { AdmittedEval, EvalJobStore, type JobRecord, type JobView, notFound } from './eval-jobs';
import type { FinalizeResult } from './finalize';
import { refuseProtectedChanges } from './protected-paths';
import { routeResults } from './results-routing';
import { evaluateAdmitted, verdictForTier } from './early-stop-eval';
import type { SidecarDeps } from './sidecar-deps';

const EvalBody = z.strictObject({
  split: z.string().min(1),
  dataset_id: z.string().optional(),
  commit: z.string().min(1).optional(),
  sample_ids: z.array(z.number().int()).optional(),
  num_samples: z.number().int().optional(),
  /** Samples by name (a Harbor task name; a Mode A row id), as vero's `--case-id` names them. */
  case_ids: z.array(z.string().min(1)).optional(),
  /** The client's id for this request (retries re-send it): charged once, the same evaluation returned. */
  request_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{8,128}$/, 'expected 8-128 letters, digits, _ or -')
    .optional(),
});

/** The evaluation's workflow was cancelled (finalize's drain cancels what it left). */
const isCancellation = (e: unknown): boolean =>
  e instanceof CancelledFailure || (e instanceof Error && e.cause instanceof CancelledFailure);

const closedMessage = 'finalization has begun: no new evaluations (nothing was charged)';

export class AgentEvaluations {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  private readonly jobs: EvalJobStore;
  /** The jobs this process is running (a job found on disk as running, and not here, is resumed). */
  private readonly running = new Set<string>();

  constructor(private readonly d: SidecarDeps) {
    this.jobs = new EvalJobStore(d.cfg.paths.admin_volume);
  }

  /** One blocking `POST /eval`, tracked while it runs. */
  async run(rawBody: unknown): Promise<unknown> {
    if (this.closed) throw conflict(closedMessage);
    return this.track(this.admit(rawBody).then((a) => this.complete(a)));
  }

  /**
   * `POST /eval/jobs`: checked and charged as `POST /eval` (a refusal is answered at once), then run in the
   * sidecar; answers the job at once. The same request id again returns the same job (charged once).
   */
  async start(rawBody: unknown): Promise<JobView> {
    if (this.closed) throw conflict(closedMessage);
    const body = EvalBody.parse(rawBody ?? {});
    const requestId = body.request_id ?? randomUUID();
    const known = this.jobs.get(requestId);
    if (known && (known.status !== 'running' || this.running.has(requestId))) return this.view(known);
    const admitted = await this.admit({ ...body, request_id: requestId });
    this.launch(
      known ?? {
        job_id: requestId,
        status: 'running',
        split: admitted.split,
        commit: admitted.commit,
        n_samples: admitted.ids.length,
        started_at: new Date().toISOString(),
        admitted,
      },
    );
    return this.view(this.jobs.get(requestId)!);
  }

  /** `GET /eval/jobs/:id`: the job; one a restarted sidecar finds running is resumed (nothing charged again). */
  async job(id: string): Promise<JobView> {
    const rec = this.jobs.get(id);
    if (!rec) throw notFound(`no evaluation job "${id}"`);
    if (rec.status === 'running' && !this.running.has(id)) {
      if (this.closed) {
        this.jobs.put({ ...rec, status: 'cancelled', finished_at: new Date().toISOString(), error: closedMessage });
      } else {
        this.d.log(`eval: resuming job ${id} after a restart (not charged again)`);
        this.launch(rec);
      }
    }
    return this.view(this.jobs.get(id)!);
  }

  /** No evaluation is accepted from now on (finalize has begun). */
  close(): void {
    this.closed = true;
  }

  private async view(rec: JobRecord): Promise<JobView> {
    const progress =
      rec.status === 'running' ? await this.d.engine.progressOf(rec.commit, rec.split, rec.admitted.ids).catch(() => undefined) : undefined;
    return EvalJobStore.view(rec, progress);
  }

  /** Runs an admitted job in the background, recording how it ends. */
  private launch(rec: JobRecord): void {
    this.jobs.put(rec);
    this.running.add(rec.job_id);
    const done = (patch: Partial<JobRecord>) => {
      this.running.delete(rec.job_id);
      this.jobs.put({ ...rec, ...patch, finished_at: new Date().toISOString() });
    };
    void this.track(this.complete(rec.admitted)).then(
      (result) => done({ status: 'complete', result }),
      (e: unknown) => {
        const cancelled = isCancellation(e);
        this.d.log(`eval: job ${rec.job_id} ${cancelled ? 'cancelled' : 'failed'}: ${(e as Error).message}`);
        done({ status: cancelled ? 'cancelled' : 'failed', error: cancelled ? 'cancelled: finalization has begun' : (e as Error).message });
      },
    );
  }

  private async track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(work);
    }
  }

  /** Checks and charges a request: tier gate, samples, commit, read-only paths, then the durable reservation. */
  private async admit(rawBody: unknown): Promise<AdmittedEval> {
    const { cfg, engine, ledger, log } = this.d;
    const body = EvalBody.parse(rawBody ?? {});
    if (body.dataset_id !== undefined && body.dataset_id !== cfg.task_name)
      throw notEvaluable(`unknown dataset_id "${body.dataset_id}" (this task's is "${cfg.task_name}")`);
    // 1. Tier gate, fail closed: an unlisted split is no_access.
    const access = engine.tier(body.split);
    if (access === 'no_access') throw notEvaluable(`split "${body.split}" is not evaluable`);
    // 2. Which samples, and which commit (a request rejected here costs nothing).
    const sampleIds = body.case_ids ? engine.idsOfNames(body.split, body.case_ids) : body.sample_ids;
    const { ids, full } = engine.selectForAgent(body.split, { sample_ids: sampleIds, num_samples: body.num_samples });
    const commit = await transferCommit(cfg.repo_path, cfg.agent_repo_path, body.commit);
    await refuseProtectedChanges(cfg, commit, 'eval', log);
    // Finalize began while this request was being checked: it would not be waited for.
    if (this.closed) throw conflict(closedMessage);
    // 3. Atomic, durable reservation (an early stop refunds the cases it never ran).
    const { replayed, ...remaining } = await ledger.reserve(
      body.split,
      ids.length,
      commit,
      body.request_id ? { id: body.request_id, samples: ids.join(',') } : undefined,
    );
    if (replayed) log(`eval: request ${body.request_id} re-sent; not charged again`);
    const budget_remaining = cfg.disclose_budget === false ? null : remaining; // vero's disclose_budget: enforced, not shown
    return { request_id: body.request_id ?? '', split: body.split, commit, ids, full, access, budget_remaining };
  }

  /** 4. The evaluation itself, then its registry entry and what the agent may see of it. */
  private async complete(a: AdmittedEval) {
    const { cfg, registry } = this.d;
    const { commit, split, full, access } = a;
    const { out, verdict, budgetAfter } = await evaluateAdmitted(this.d, a);
    await registry.add({
      commit,
      split,
      n_samples: verdict ? out.samples.length : a.ids.length,
      full_split: full && !verdict?.stopped,
      mean_score: out.meanScore,
      n_errors: out.nErrors,
      admin: false,
      ...(a.request_id ? { request_id: a.request_id } : {}),
      ...(out.invalid ? { invalid: out.invalid } : {}),
      ...(out.violations ? { violations: out.violations } : {}),
      attempt_health: { ...out.health },
      ...(verdict ? { early_stop: verdict } : {}),
    });
    if (out.health.warning) this.d.log(`eval: ${split} @ ${commit.slice(0, 12)}: ${out.health.warning}`);
    const summary = {
      commit,
      split,
      n_samples: verdict ? out.samples.length : a.ids.length,
      n_errors: out.nErrors,
      mean_score: out.meanScore,
      status: out.invalid ? 'invalid' : out.nErrors ? 'completed_with_errors' : 'completed',
      ...(out.invalid ? { invalid_reason: out.invalid } : {}),
      ...(out.modelUsage ? { model_usage: out.modelUsage } : {}),
      ...(out.trials ?? {}),
      ...(out.metrics ? { metrics: out.metrics } : {}),
      ...(out.violations ? { violations: out.violations } : {}),
      attempt_health: out.health,
      ...(verdict ? { early_stop: verdictForTier(verdict, access) } : {}),
    };
    const resultDir = routeResults(cfg.paths.agent_volume, access, summary, out.samples);
    const budget_remaining = budgetAfter && cfg.disclose_budget !== false ? budgetAfter : a.budget_remaining;
    return { ...summary, result_path: resultDir, budget_remaining };
  }

  /**
   * Waits (at most drain_timeout_sec) for the evaluations still running, then cancels what is left and waits
   * for the cancellations to settle. What finished is in the registry for finalize to choose from.
   */
  async drain(): Promise<FinalizeResult['drain']> {
    const { cfg, engine, log } = this.d;
    const running = [...this.inFlight];
    if (running.length === 0) return undefined;
    const started = Date.now();
    log(`finalize: waiting up to ${cfg.drain_timeout_sec} s for ${running.length} agent evaluation(s) still running`);
    let finished = 0;
    const settled = running.map((p) => p.then(() => finished++).catch(() => undefined));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((r) => (timer = setTimeout(r, cfg.drain_timeout_sec * 1000)));
    await Promise.race([Promise.all(settled), timedOut]);
    clearTimeout(timer);
    const cancelled = this.inFlight.size ? await engine.cancelAgentEvaluations() : 0;
    if (cancelled) {
      log(`finalize: cancelled ${cancelled} agent evaluation(s) the drain left`);
      await Promise.all(settled);
    }
    return { in_flight: running.length, finished, cancelled, waited_sec: Math.round((Date.now() - started) / 1000) };
  }
}
