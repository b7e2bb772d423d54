/** The eval sidecar's HTTP API. JSON bodies are validated with zod; errors map to statuses and leak nothing hidden. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Fastify, { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ServeConfig } from '../model/serve-config';
import { writeJsonDurable } from '../infra/atomic-file';
import { transferCommit } from './commit-transfer';
import type { Engine } from './engine';
import { badRequest, conflict, forbidden, notEvaluable, SidecarError } from './errors';
import { finalize, type FinalizeResult } from './finalize';
import { protectedChanges, refusal } from './protected-paths';
import type { Ledger } from './ledger';
import type { CandidateRegistry } from './registry';
import { routeResults } from './results-routing';
import { tokenMatches } from './token';

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
const SubmitBody = z.strictObject({ commit: z.string().min(1).optional() });

export interface SidecarDeps {
  cfg: ServeConfig;
  engine: Engine;
  ledger: Ledger;
  registry: CandidateRegistry;
  token: string;
  log: (line: string) => void;
  /** The gateway's usage and limits per scope, when the task has one (numbers only). */
  gatewayStatus?: () => unknown;
}

export function buildServer(d: SidecarDeps): FastifyInstance {
  const { cfg, engine, ledger, registry } = d;
  /** read_only_paths: a candidate that changed one is refused (422) before anything is reserved or recorded. */
  const refuseProtectedChanges = async (commit: string, route: string): Promise<void> => {
    const changes = await protectedChanges(cfg.repo_path, cfg.base_commit, commit, cfg.read_only_paths);
    if (changes.length === 0) return;
    d.log(`${route}: refused candidate ${commit}: it changes read-only path(s) ${changes.join(', ')}`);
    throw refusal(commit, changes);
  };
  // Evaluations can take hours: no server-side request timeout (Node's default is 5 minutes). On close (SIGTERM),
  // open connections are closed rather than waited for: an /eval in flight waits for a workflow whose worker is
  // draining. Its client re-sends the same request id, and the restarted sidecar attaches to the same evaluation.
  const app = Fastify({ logger: false, bodyLimit: 1 << 20, requestTimeout: 0, connectionTimeout: 0, forceCloseConnections: true });

  // JSON bodies are decoded strictly: invalid UTF-8 is named as such (fastify's default parser reports a
  // length mismatch instead).
  const jsonParser = app.getDefaultJsonParser('error', 'error'); // refuses __proto__ / constructor poisoning
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      return done(badRequest('the request body is not valid UTF-8'), undefined);
    }
    jsonParser(req, text, done);
  });

  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof SidecarError) return reply.status(err.status).send({ error: err.message });
    if (err instanceof z.ZodError)
      return reply
        .status(400)
        .send({ error: `invalid request: ${err.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}` });
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) return reply.status(status).send({ error: err.message });
    d.log(`internal error: ${err.stack ?? err.message}`);
    return reply.status(500).send({ error: 'internal error in the eval sidecar (details are in its log)' });
  });

  app.get('/health', async () => ({ ok: true }));

  app.get('/status', async () => ({
    ...(d.gatewayStatus ? { gateway: d.gatewayStatus() } : {}),
    task: cfg.task_name,
    reward_mode: cfg.reward_mode,
    selection_split: cfg.selection_split,
    submit_enabled: cfg.submit_enabled,
    splits: cfg.splits.map((s) => {
      const b = ledger.remaining(s.split);
      return {
        split: s.split,
        access: s.access,
        agent_evaluable: s.access !== 'no_access' && b !== null,
        budget: s.access === 'no_access' ? null : b,
      };
    }),
  }));

  // Agent evaluations in flight, so finalize can wait for them (the optimizer's last candidate may be its best);
  // once finalize has begun, no new one is accepted.
  const inFlight = new Set<Promise<unknown>>();
  let closedForEvals = false;
  app.post('/eval', async (req) => {
    if (closedForEvals) throw conflict('finalization has begun: no new evaluations (nothing was charged)');
    const work = evaluateForAgent(req.body);
    inFlight.add(work);
    try {
      return await work;
    } finally {
      inFlight.delete(work);
    }
  });

  const evaluateForAgent = async (rawBody: unknown) => {
    const body = EvalBody.parse(rawBody ?? {});
    if (body.dataset_id !== undefined && body.dataset_id !== cfg.task_name)
      throw notEvaluable(`unknown dataset_id "${body.dataset_id}" (this task's is "${cfg.task_name}")`);
    // 1. Tier gate, fail closed: an unlisted split is no_access.
    const access = engine.tier(body.split);
    if (access === 'no_access') throw notEvaluable(`split "${body.split}" is not evaluable`);
    // 2. Which samples, and which commit (a request rejected here costs nothing).
    const { ids, full } = engine.selectForAgent(body.split, { sample_ids: body.sample_ids, num_samples: body.num_samples });
    const commit = await transferCommit(cfg.repo_path, cfg.agent_repo_path, body.commit);
    await refuseProtectedChanges(commit, 'eval');
    // Finalize began while this request was being checked: it would not be waited for.
    if (closedForEvals) throw conflict('finalization has begun: no new evaluations (nothing was charged)');
    // 3. Atomic, durable reservation; never refunded.
    const { replayed, ...remaining } = await ledger.reserve(
      body.split,
      ids.length,
      commit,
      body.request_id ? { id: body.request_id, samples: ids.join(',') } : undefined,
    );
    if (replayed) d.log(`eval: request ${body.request_id} re-sent; not charged again`);
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
  };

  /**
   * Waits (at most drain_timeout_sec) for the agent evaluations still running, then cancels what is left and
   * waits for the cancellations to settle. What finished is in the registry for finalize to choose from.
   */
  const drainEvaluations = async (): Promise<FinalizeResult['drain']> => {
    const running = [...inFlight];
    if (running.length === 0) return undefined;
    const started = Date.now();
    d.log(`finalize: waiting up to ${cfg.drain_timeout_sec} s for ${running.length} agent evaluation(s) still running`);
    let finished = 0;
    const settled = running.map((p) => p.then(() => finished++).catch(() => undefined));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((r) => (timer = setTimeout(r, cfg.drain_timeout_sec * 1000)));
    await Promise.race([Promise.all(settled), timedOut]);
    clearTimeout(timer);
    const cancelled = inFlight.size ? await engine.cancelAgentEvaluations() : 0;
    if (cancelled) {
      d.log(`finalize: cancelled ${cancelled} agent evaluation(s) the drain left`);
      await Promise.all(settled);
    }
    return { in_flight: running.length, finished, cancelled, waited_sec: Math.round((Date.now() - started) / 1000) };
  };

  app.post('/submit', async (req) => {
    if (!cfg.submit_enabled) throw conflict('submit is disabled for this task');
    const body = SubmitBody.parse(req.body ?? {});
    const commit = await transferCommit(cfg.repo_path, cfg.agent_repo_path, body.commit);
    await refuseProtectedChanges(commit, 'submit');
    writeJsonDurable(path.join(cfg.paths.admin_volume, 'submission.json'), { commit, at: new Date().toISOString() }, { mode: 0o600 });
    return { submitted_commit: commit };
  });

  // Finalize runs once: a second call (a retried verifier) gets the recorded result, and a call while one is
  // running waits for it. A failed finalize records nothing, so it can be run again.
  const finalizeFile = path.join(cfg.paths.admin_volume, 'finalize.json');
  let finalizing: Promise<FinalizeResult> | null = null;
  const runFinalize = async (): Promise<FinalizeResult> => {
    if (fs.existsSync(finalizeFile)) return { ...(JSON.parse(fs.readFileSync(finalizeFile, 'utf8')) as FinalizeResult), replayed: true };
    const drain = await drainEvaluations();
    const result = { ...(await finalize(cfg, engine, registry)), ...(drain ? { drain } : {}), candidates: registry.list() };
    d.log(`finalize: commit ${result.commit ?? '(none)'}: ${result.reason}`);
    fs.mkdirSync(cfg.paths.admin_volume, { recursive: true });
    writeJsonDurable(finalizeFile, result, { mode: 0o600 });
    return result;
  };

  app.post('/finalize', async (req) => {
    const header = req.headers.authorization;
    const given = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
    if (!tokenMatches(d.token, given)) throw forbidden('a valid admin token is required');
    closedForEvals = true;
    finalizing ??= runFinalize().finally(() => (finalizing = null));
    try {
      return await finalizing;
    } catch (e) {
      d.log(`finalize failed: ${(e as Error).message}`);
      throw e;
    }
  });

  return app;
}
