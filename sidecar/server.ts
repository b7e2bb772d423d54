/**
 * The eval sidecar's HTTP API: the routes, each a line; what they do is in agent-evaluations.ts (`/eval`),
 * finalize-once.ts (`/finalize`) and http-json.ts (bodies and errors).
 */
import * as path from 'node:path';
import Fastify, { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { writeJsonDurable } from '../infra/atomic-file';
import { AgentEvaluations } from './agent-evaluations';
import { transferCommit } from './commit-transfer';
import { conflict, forbidden } from './errors';
import { FinalizeOnce } from './finalize-once';
import { useErrorReplies, useStrictJsonBodies } from './http-json';
import { refuseProtectedChanges } from './protected-paths';
import type { SidecarDeps } from './sidecar-deps';
import { tokenMatches } from './token';

const SubmitBody = z.strictObject({ commit: z.string().min(1).optional() });

export function buildServer(d: SidecarDeps): FastifyInstance {
  // Evaluations can take hours: no server-side request timeout (Node's default is 5 minutes). On close (SIGTERM),
  // open connections are closed rather than waited for: an /eval in flight waits for a workflow whose worker is
  // draining. Its client re-sends the same request id, and the restarted sidecar attaches to the same evaluation.
  const app = Fastify({ logger: false, bodyLimit: 1 << 20, requestTimeout: 0, connectionTimeout: 0, forceCloseConnections: true });
  useStrictJsonBodies(app);
  useErrorReplies(app, d.log);
  const evals = new AgentEvaluations(d);
  const finalizer = new FinalizeOnce(d, evals);

  app.get('/health', async () => ({ ok: true }));
  app.get('/status', async () => status(d));
  app.post('/eval', async (req) => evals.run(req.body));
  app.post('/eval/jobs', async (req) => evals.start(req.body));
  app.get<{ Params: { id: string } }>('/eval/jobs/:id', async (req) => evals.job(req.params.id));
  app.post('/submit', async (req) => submit(d, req.body));
  app.post('/finalize', async (req) => {
    const header = req.headers.authorization;
    if (!tokenMatches(d.token, header?.startsWith('Bearer ') ? header.slice(7) : undefined))
      throw forbidden('a valid admin token is required');
    return finalizer.run();
  });
  return app;
}

/** `GET /status`: the task, its splits with their budgets left, and the gateway's usage (numbers only). */
function status({ cfg, ledger, gatewayStatus }: SidecarDeps) {
  return {
    ...(gatewayStatus && cfg.disclose_budget !== false ? { gateway: gatewayStatus() } : {}),
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
        budget: s.access === 'no_access' || cfg.disclose_budget === false ? null : b,
      };
    }),
  };
}

/** `POST /submit`: records the optimizer's chosen commit (checked against the read-only paths). */
async function submit({ cfg, log }: SidecarDeps, rawBody: unknown) {
  if (!cfg.submit_enabled) throw conflict('submit is disabled for this task');
  const body = SubmitBody.parse(rawBody ?? {});
  const commit = await transferCommit(cfg.repo_path, cfg.agent_repo_path, body.commit);
  await refuseProtectedChanges(cfg, commit, 'submit', log);
  writeJsonDurable(path.join(cfg.paths.admin_volume, 'submission.json'), { commit, at: new Date().toISOString() }, { mode: 0o600 });
  return { submitted_commit: commit };
}
