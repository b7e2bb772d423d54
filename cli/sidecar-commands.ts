/** The eval sidecar (`vero serve`) and its agent-side client: eval, budget, submit, finalize. */
import { type FinalizeRanking, finalizeRankingLines } from './ranking-lines';
import { camelCaseKeys } from '../model/json-case';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { ConfigError } from '../model/errors';
import { parseIntFlag } from './int-flag';
import { call, callRetrying, sidecarUrl } from './sidecar-client';
import {
  deadlineOf,
  DEFAULT_POLL_SEC,
  DEFAULT_WAIT_SEC,
  jobJson,
  type JobAnswer,
  runningText,
  type WaitFlags,
  waitForJob,
} from './eval-job-wait';
import { writeFileDurable } from '../infra/atomic-file';

/** The answer as text, or as JSON: the API's fields camelCased, like every `vero … --json` (model/json-case.ts). */
const out = (v: unknown, json?: boolean, text?: () => string) =>
  process.stdout.write(`${json || !text ? JSON.stringify(camelCaseKeys(v), null, 2) : text()}\n`);

/**
 * The sidecar itself (its worker, HTTP server and gateway), loaded only by `serve` and `snapshot`: the agent-side
 * commands (`vero eval`, `eval wait`, `budget`, …) are HTTP clients an optimizer runs many times, and start in a
 * fraction of the time without it.
 */
const sidecarServe = () => require('../sidecar/serve') as typeof import('../sidecar/serve');

export function registerSidecarCommands(program: Command): void {
  registerServe(program);
  registerEval(program);
  registerBudget(program);
  registerSubmit(program);
  registerFinalize(program);
  registerSnapshot(program);
}

/**
 * A session is where the sidecar ran (the task's container): elsewhere (the host) its admin volume is not there,
 * and a snapshot would be an empty session a relaunch would resume from as if nothing had been spent.
 */
function refuseAbsentSession(configFile: string, adminVolume: string): void {
  if (!fs.existsSync(adminVolume) || !fs.statSync(adminVolume).isDirectory())
    throw new ConfigError(
      `--config ${configFile}: the sidecar's session dir ${adminVolume} is not on this machine: vero snapshot runs where the sidecar runs (inside the task's container), nothing was written`,
    );
}

/** `vero snapshot`: the sidecar's session into one dir, for Harbor to rescue (the task's collect step). */
function registerSnapshot(program: Command): void {
  program
    .command('snapshot')
    .description("write the eval sidecar's session (ledger, candidates, jobs, meter, results shown, commits) for a relaunch to resume from")
    .requiredOption('--config <serve.json>', 'the serve config written by `vero build`')
    .requiredOption('--out <dir>', 'the dir to write (replaced whole)')
    .action(async (o: { config: string; out: string }) => {
      const { takeSnapshot } = require('../sidecar/session-snapshot') as typeof import('../sidecar/session-snapshot');
      const cfg = sidecarServe().loadServeConfig(o.config);
      refuseAbsentSession(o.config, cfg.paths.admin_volume);
      const m = await takeSnapshot(cfg, o.out);
      process.stdout.write(`${o.out}: ${Object.keys(m.files).length} file(s) of the session of ${m.task_name}\n`);
    });
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
      const s = await sidecarServe().serve(o.config, { address: o.address, taskQueue: o.taskQueue, port: o.port, host: o.host });
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

/** What `vero eval` prints for a finished evaluation. */
export function resultText(r: Record<string, unknown>): string {
  const x = r as {
    commit: string;
    split: string;
    n_samples: number;
    n_errors: number;
    mean_score: number;
    result_path: string | null;
    budget_remaining: unknown;
    invalid_reason?: string;
  };
  return `${x.split} @ ${x.commit.slice(0, 12)}: mean score ${x.mean_score.toFixed(3)} over ${x.n_samples} sample(s)${x.n_errors ? `, ${x.n_errors} error(s) counted as 0` : ''}${x.invalid_reason ? `\nINVALID, not a score of the candidate: ${x.invalid_reason}` : ''}${x.result_path ? `\nresults: ${x.result_path}` : ''}\nbudget left: ${JSON.stringify(x.budget_remaining)}`;
}

/** Prints a job as `vero eval` does: its result when complete, else its id, progress and what to run next. */
export function printJob(job: JobAnswer, json?: boolean): void {
  out(jobJson(job), json, () => (job.status === 'complete' && job.result ? resultText(job.result) : runningText(job)));
}

export interface EvalRequest {
  split: string;
  commit?: string;
  num_samples?: number;
  sample_ids?: number[];
  case_ids?: string[];
}

/** Starts (or re-attaches to) one evaluation job and waits for it within the bound. */
export async function startAndWait(url: URL, req: EvalRequest, flags: WaitFlags & { detach?: boolean }): Promise<JobAnswer> {
  // One id for this evaluation, re-sent on every retry: the sidecar charges it once, and it is the job's id.
  const body = { ...req, request_id: randomUUID() };
  const deadline = deadlineOf(flags);
  const job = (await callRetrying(url, 'POST', '/eval/jobs', body, {}, undefined, deadline)) as JobAnswer;
  return flags.detach ? job : waitForJob(url, job, flags, deadline);
}

const waitOptions = (c: Command) =>
  c
    .option(
      '--timeout <sec>',
      `return after at most this many seconds (default $VERO_EVAL_WAIT_SEC or ${DEFAULT_WAIT_SEC}); an evaluation still running is not stopped`,
      parseIntFlag('--timeout'),
    )
    .option(
      '--poll-interval <sec>',
      `seconds between checks (default ${DEFAULT_POLL_SEC})`,
      parseIntFlag('--poll-interval', { min: 1, max: 3600 }),
    );

/** `vero eval`: one metered evaluation (the optimizer's), waited for within a bound; `vero eval wait ID` resumes. */
function registerEval(program: Command): void {
  waitOptions(
    program
      .command('eval')
      .usage('--split <split> [options]  |  vero eval wait <id> [options]')
      .description(
        'evaluate a committed candidate on a split through the eval sidecar (spends budget); returns within a bound (--timeout) with the result, or with the evaluation id and its progress when it is still running: then `vero eval wait ID` (waits within the same bound; safe to repeat, never charged again)',
      )
      .argument('[wait]', '`wait`, to wait for an evaluation already started')
      .argument('[id]', 'with `wait`: the evaluation id `vero eval` printed')
      .option('--split <split>', 'the split to evaluate on (required unless waiting)')
      .option('--commit <ref>', 'commit to evaluate (default HEAD of /workspace/agent)')
      .option('--num-samples <n>', 'evaluate the first N samples only', parseIntFlag('--num-samples'))
      .option('--sample-ids <ids>', 'comma-separated sample ids')
      .option('--detach', 'return the evaluation id at once, without waiting')
      .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
      .option('--json', 'machine-readable output'),
  )
    .addHelpText(
      'after',
      `
Exit code: 0 with the result, or with a still-running evaluation (its id, progress, and the command to wait
for it); 1 when the evaluation failed or was cancelled, or the sidecar refused the request (the reason on
stderr). The budget is charged once per evaluation, however many times it is waited for.`,
    )
    .action(
      async (
        verb: string | undefined,
        id: string | undefined,
        o: WaitFlags & {
          split?: string;
          commit?: string;
          numSamples?: number;
          sampleIds?: string;
          url?: string;
          json?: boolean;
          detach?: boolean;
        },
      ) => {
        const url = sidecarUrl(o.url);
        if (verb !== undefined) {
          if (verb !== 'wait' || !id)
            throw new ConfigError(
              `expected \`vero eval wait <id>\` or \`vero eval --split <split>\`, got "${[verb, id].filter(Boolean).join(' ')}"`,
            );
          return printJob(await waitForJob(url, id, o), o.json);
        }
        if (!o.split) throw new ConfigError("required option '--split <split>' not specified");
        const job = await startAndWait(
          url,
          {
            split: o.split,
            ...(o.commit ? { commit: o.commit } : {}),
            ...(o.numSamples !== undefined ? { num_samples: o.numSamples } : {}),
            ...(o.sampleIds ? { sample_ids: o.sampleIds.split(',').map((x) => Number(x.trim())) } : {}),
          },
          o,
        );
        printJob(job, o.json);
      },
    );
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
      } & FinalizeRanking;
      const write = (file: string, v: unknown) => {
        writeFileDurable(path.resolve(file), JSON.stringify(v, null, file === o.output ? undefined : 2));
      };
      if (o.details) write(o.details, r);
      write(o.output, r.rewards);
      process.stderr.write(`finalize: ${r.commit ?? 'no candidate'}: ${r.reason}\n`);
      for (const line of finalizeRankingLines(r)) process.stderr.write(`finalize: ${line}\n`);
      const baselines = Object.entries(r.baselines ?? {});
      if (baselines.length)
        process.stderr.write(
          `finalize: baseline ${baselines.map(([k, b]) => `${k}=${b.reward ?? `unscored: ${b.error}`} (${b.source})`).join(', ')}\n`,
        );
    });
}
