/**
 * The optimizer's evaluations (`POST /eval`): each checked, charged and run in order — tier gate, samples,
 * commit, read-only paths, then a durable reservation (never refunded), the evaluation, the registry entry and
 * what the agent may see of it. Those in flight are tracked so finalize can wait for them (the optimizer's last
 * candidate may be its best); once finalize has begun, none is accepted.
 */
import { z } from 'zod';
import { transferCommit } from './commit-transfer';
import { conflict, notEvaluable } from './errors';
import type { FinalizeResult } from './finalize';
import { refuseProtectedChanges } from './protected-paths';
import { routeResults } from './results-routing';
import type { SidecarDeps } from './server';

const EvalBody = z.strictObject({
  split: z.string().min(1),
  dataset_id: z.string().optional(),
  commit: z.string().min(1).optional(),
  sample_ids: z.array(z.number().int()).optional(),
  num_samples: z.number().int().optional(),
  /** The client's id for this request (retries re-send it): charged once, the same evaluation returned. */
  request_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{8,128}$/, 'expected 8-128 letters, digits, _ or -')
    .optional(),
});

const closedMessage = 'finalization has begun: no new evaluations (nothing was charged)';

export class AgentEvaluations {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly d: SidecarDeps) {}

  /** One `POST /eval`, tracked while it runs. */
  async run(rawBody: unknown): Promise<unknown> {
    if (this.closed) throw conflict(closedMessage);
    const work = this.evaluate(rawBody);
    this.inFlight.add(work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(work);
    }
  }

  /** No evaluation is accepted from now on (finalize has begun). */
  close(): void {
    this.closed = true;
  }

  private async evaluate(rawBody: unknown) {
    const { cfg, engine, ledger, registry, log } = this.d;
    const body = EvalBody.parse(rawBody ?? {});
    if (body.dataset_id !== undefined && body.dataset_id !== cfg.task_name)
      throw notEvaluable(`unknown dataset_id "${body.dataset_id}" (this task's is "${cfg.task_name}")`);
    // 1. Tier gate, fail closed: an unlisted split is no_access.
    const access = engine.tier(body.split);
    if (access === 'no_access') throw notEvaluable(`split "${body.split}" is not evaluable`);
    // 2. Which samples, and which commit (a request rejected here costs nothing).
    const { ids, full } = engine.selectForAgent(body.split, { sample_ids: body.sample_ids, num_samples: body.num_samples });
    const commit = await transferCommit(cfg.repo_path, cfg.agent_repo_path, body.commit);
    await refuseProtectedChanges(cfg, commit, 'eval', log);
    // Finalize began while this request was being checked: it would not be waited for.
    if (this.closed) throw conflict(closedMessage);
    // 3. Atomic, durable reservation; never refunded.
    const { replayed, ...remaining } = await ledger.reserve(
      body.split,
      ids.length,
      commit,
      body.request_id ? { id: body.request_id, samples: ids.join(',') } : undefined,
    );
    if (replayed) log(`eval: request ${body.request_id} re-sent; not charged again`);
    // 4. The evaluation itself, then what the agent may see of it.
    const out = await engine.evaluate(commit, body.split, ids);
    await registry.add({
      commit,
      split: body.split,
      n_samples: ids.length,
      full_split: full,
      mean_score: out.meanScore,
      n_errors: out.nErrors,
      admin: false,
      ...(body.request_id ? { request_id: body.request_id } : {}),
      ...(out.invalid ? { invalid: out.invalid } : {}),
    });
    const summary = {
      commit,
      split: body.split,
      n_samples: ids.length,
      n_errors: out.nErrors,
      mean_score: out.meanScore,
      status: out.invalid ? 'invalid' : out.nErrors ? 'completed_with_errors' : 'completed',
      ...(out.invalid ? { invalid_reason: out.invalid } : {}),
      ...(out.modelUsage ? { model_usage: out.modelUsage } : {}),
      ...(out.trials ?? {}),
    };
    const resultDir = routeResults(cfg.paths.agent_volume, access, summary, out.samples);
    return { ...summary, result_path: resultDir, budget_remaining: remaining };
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
