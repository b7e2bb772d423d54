/** The eval sidecar (`vero serve`) and its agent-side client: eval, budget, submit, finalize. */
import { camelCaseKeys } from '../model/json-case';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { Command } from 'commander';
import { ConfigError, SidecarError } from '../model/errors';
import { serve } from '../sidecar/serve';
import { parseIntFlag } from './options';

function sidecarUrl(flag?: string): URL {
  const raw = flag ?? process.env.VERO_EVAL_URL;
  if (!raw) throw new ConfigError('VERO_EVAL_URL is not set (the compiled task sets it to the eval sidecar); or pass --url');
  try {
    return new URL(raw);
  } catch {
    throw new ConfigError(`VERO_EVAL_URL: "${raw}" is not a URL`);
  }
}

/** JSON over node:http with no client timeout: an evaluation may take hours. */
export function call(
  base: URL,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const url = new URL(route, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        headers: { ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let json: unknown = null;
          try {
            json = JSON.parse(text);
          } catch {
            json = null;
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(json);
          else
            reject(
              new SidecarError(
                status,
                `eval sidecar replied ${status}: ${(json as { error?: string } | null)?.error ?? text.slice(0, 500)}`,
              ),
            );
        });
      },
    );
    req.on('error', (e) => reject(new SidecarError(0, `cannot reach the eval sidecar at ${base.href}: ${e.message}`)));
    if (payload) req.write(payload);
    req.end();
  });
}

/**
 * `call`, re-sent while the sidecar cannot be reached or restarts (status 0 or 502-504), for up to 10 minutes:
 * with a request id in the body, a re-sent evaluation is never charged twice.
 */
export async function callRetrying(
  base: URL,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
  retryStatuses: number[] = [0, 502, 503, 504],
): Promise<unknown> {
  const until = Date.now() + 10 * 60_000;
  for (let waitMs = 1_000; ; waitMs = Math.min(waitMs * 2, 30_000)) {
    try {
      return await call(base, method, route, body, headers);
    } catch (e) {
      const status = e instanceof SidecarError ? e.status : -1;
      if (!retryStatuses.includes(status) || Date.now() + waitMs > until) throw e;
      process.stderr.write(`${(e as Error).message}; retrying in ${waitMs / 1000}s\n`);
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}

/** The answer as text, or as JSON: the API's fields camelCased, like every `vero … --json` (model/json-case.ts). */
const out = (v: unknown, json?: boolean, text?: () => string) =>
  process.stdout.write(`${json || !text ? JSON.stringify(camelCaseKeys(v), null, 2) : text()}\n`);

export function registerSidecarCommands(program: Command): void {
  registerServe(program);
  registerEval(program);
  registerBudget(program);
  registerSubmit(program);
  registerFinalize(program);
}

/** `vero serve`: the eval sidecar itself. */
function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the eval sidecar of a compiled task (metered evaluations, hidden splits, finalize)')
    .requiredOption('--config <serve.json>', 'the serve config written by `vero build`')
    .option('--address <host:port>', 'an existing Temporal server (default: start one, SQLite under the home dir)')
    .option('--task-queue <queue>', 'task queue of the in-process worker', 'vero-sidecar')
    .option('--port <port>', 'override the config port (0 = any free port)', parseIntFlag('--port'))
    .option('--host <host>', 'override the config host')
    .action(async (o: { config: string; address?: string; taskQueue: string; port?: number; host?: string }) => {
      const s = await serve(o.config, { address: o.address, taskQueue: o.taskQueue, port: o.port, host: o.host });
      process.stdout.write(`listening on ${s.port}\n`);
      let closing = false;
      const stop = () => {
        if (closing) return;
        closing = true;
        void s.close().then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      await new Promise(() => undefined);
    });
}

/** `vero eval`: one metered evaluation (the optimizer's). */
function registerEval(program: Command): void {
  program
    .command('eval')
    .description('evaluate a committed candidate on a split through the eval sidecar (spends budget)')
    .requiredOption('--split <split>', 'the split to evaluate on')
    .option('--commit <ref>', 'commit to evaluate (default HEAD of /workspace/agent)')
    .option('--num-samples <n>', 'evaluate the first N samples only', parseIntFlag('--num-samples'))
    .option('--sample-ids <ids>', 'comma-separated sample ids')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .option('--json', 'machine-readable output')
    .action(async (o: { split: string; commit?: string; numSamples?: number; sampleIds?: string; url?: string; json?: boolean }) => {
      const body = {
        split: o.split,
        commit: o.commit,
        num_samples: o.numSamples,
        sample_ids: o.sampleIds?.split(',').map((x) => Number(x.trim())),
        // One id for this evaluation, re-sent on every retry: the sidecar charges it once.
        request_id: randomUUID(),
      };
      const r = (await callRetrying(sidecarUrl(o.url), 'POST', '/eval', body)) as {
        commit: string;
        split: string;
        n_samples: number;
        n_errors: number;
        mean_score: number;
        result_path: string | null;
        budget_remaining: unknown;
        invalid_reason?: string;
      };
      out(
        r,
        o.json,
        () =>
          `${r.split} @ ${r.commit.slice(0, 12)}: mean score ${r.mean_score.toFixed(3)} over ${r.n_samples} sample(s)${r.n_errors ? `, ${r.n_errors} error(s) counted as 0` : ''}${r.invalid_reason ? `\nINVALID, not a score of the candidate: ${r.invalid_reason}` : ''}${r.result_path ? `\nresults: ${r.result_path}` : ''}\nbudget left: ${JSON.stringify(r.budget_remaining)}`,
      );
    });
}

/** `vero budget`: the splits, what may be seen of each, and what is left. */
function registerBudget(program: Command): void {
  program
    .command('budget')
    .description('splits, what you may see of each, and the remaining eval budget')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .option('--json', 'machine-readable output')
    .action(async (o: { url?: string; json?: boolean }) => {
      const r = (await call(sidecarUrl(o.url), 'GET', '/status')) as {
        splits: { split: string; access: string; agent_evaluable: boolean; budget: Record<string, number | null> | null }[];
        gateway?: {
          scopes: Record<string, { models: string[]; limits: Record<string, number | undefined>; usage: Record<string, number> }>;
        };
      };
      const limit = (v: number | undefined) => (v === undefined ? '∞' : String(v));
      out(r, o.json, () =>
        [
          ...r.splits.map(
            (s) =>
              `${s.split.padEnd(12)} ${s.access.padEnd(13)} ${s.agent_evaluable ? `runs left ${s.budget?.remaining_run_budget ?? '∞'}, samples left ${s.budget?.remaining_sample_budget ?? '∞'}` : 'not evaluable'}`,
          ),
          ...Object.entries(r.gateway?.scopes ?? {}).map(
            ([scope, g]) =>
              `model calls, ${scope.padEnd(12)} requests ${g.usage.requests}/${limit(g.limits.max_requests)}, input tokens ${g.usage.input_tokens}/${limit(g.limits.max_input_tokens)}, output tokens ${g.usage.output_tokens}/${limit(g.limits.max_output_tokens)}${g.usage.cost_usd ? `, $${g.usage.cost_usd.toFixed(4)}` : ''}`,
          ),
        ].join('\n'),
      );
    });
}

/** `vero submit`: nominate a candidate. */
function registerSubmit(program: Command): void {
  program
    .command('submit')
    .description('nominate the candidate to be graded (when the task enables it)')
    .option('--commit <ref>', 'commit to submit (default HEAD)')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .action(async (o: { commit?: string; url?: string }) => {
      const r = (await call(sidecarUrl(o.url), 'POST', '/submit', { commit: o.commit })) as { submitted_commit: string };
      process.stdout.write(`submitted ${r.submitted_commit}\n`);
    });
}

/** `vero finalize`: the verifier's step: choose, score, write the reward file. */
function registerFinalize(program: Command): void {
  program
    .command('finalize')
    .description(
      '(verifier) choose the candidate, score it on the target splits and write the reward file; when the sidecar cannot score (infrastructure), exit 1 and write no reward file',
    )
    .requiredOption('--token-file <file>', 'the admin token')
    .requiredOption('--output <file>', 'where to write {reward_key: score}')
    .option('--details <file>', 'also write the whole result: chosen commit, reason, shortlist, every recorded evaluation')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .action(async (o: { tokenFile: string; output: string; details?: string; url?: string }) => {
      let token: string;
      try {
        token = fs.readFileSync(o.tokenFile, 'utf8').trim();
      } catch (e) {
        throw new ConfigError(`--token-file: cannot read ${o.tokenFile} (${(e as NodeJS.ErrnoException).code})`);
      }
      // Finalize is idempotent on the sidecar: re-sent while it cannot be reached, never on a refusal.
      const r = (await callRetrying(sidecarUrl(o.url), 'POST', '/finalize', {}, { authorization: `Bearer ${token}` }, [0])) as {
        rewards: Record<string, number>;
        commit: string | null;
        reason: string;
        baselines?: Record<string, { reward: number | null; source: string; error?: string }>;
      };
      const write = (file: string, v: unknown) => {
        fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
        fs.writeFileSync(file, JSON.stringify(v, null, file === o.output ? undefined : 2));
      };
      if (o.details) write(o.details, r);
      write(o.output, r.rewards);
      process.stderr.write(`finalize: ${r.commit ?? 'no candidate'}: ${r.reason}\n`);
      const baselines = Object.entries(r.baselines ?? {});
      if (baselines.length)
        process.stderr.write(
          `finalize: baseline ${baselines.map(([k, b]) => `${k}=${b.reward ?? `unscored: ${b.error}`} (${b.source})`).join(', ')}\n`,
        );
    });
}
