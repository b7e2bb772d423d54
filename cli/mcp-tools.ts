/**
 * The MCP tools `vero mcp` serves (docs/mcp.md): each is one entry of a registry — a name, what it does, its
 * input (a zod shape the SDK validates) and the function that answers, through the same client as the CLI.
 * A command added to vero is offered to agents by adding its entry here.
 */
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { getProgress, setConcurrency } from '../client/running-eval';
import { listEvaluations } from '../client/eval-listing';
import { prepareEvalInput } from '../client/eval-input';
import { startOrAttach } from '../client/eval-start';
import { uiLink } from '../client/connection';
import { withTasks } from '../client/eval-results';
import { partialResults } from '../client/partial-results';
import { pauseEvaluation, resumeEvaluation } from '../client/pause';
import { retryTasks } from '../client/retry';
import { queryEvaluations } from '../client/query';
import { loadEvalConfig } from '../infra/eval-config-file';
import { cancelEvaluation } from '../client/cancel';
import { requireEvalId } from '../client/eval-id';
import { allowedConfig, configInput } from './mcp-configs';
import { RACE_TOOLS } from './mcp-race-tools';
import { type EvalToolContext, type McpTool, tool } from './mcp-registry';
import { MAX_CONCURRENCY } from '../model/evaluation/config';
import { ConfigError } from '../model/errors';
import { settledProgress } from '../model/evaluation/progress';
import { type CandidateResult } from '../model/evaluation/candidate-result';
import { comparePaired, taskScoresOf } from '../model/race/paired-comparison';

export { type EvalToolContext, type McpTool } from './mcp-registry';

const evalId = z.string().min(1).describe('the evaluation id (eval-<commit>-<digest>), as start_eval or list return it');

async function completedResult(client: Client, id: string, which: string): Promise<CandidateResult> {
  const d = await client.workflow.getHandle(requireEvalId(id, 'compare')).describe();
  if (d.status.name !== 'COMPLETED')
    throw new ConfigError(`${which}: evaluation ${id} is ${d.status.name.toLowerCase()}; compare needs completed ones`);
  return withTasks((await client.workflow.getHandle(id).result()) as CandidateResult);
}

export const EVAL_TOOLS: McpTool<EvalToolContext>[] = [
  tool({
    name: 'start_eval',
    description:
      'Start (or attach to, or return the completed) durable evaluation of one candidate commit, as `vero start-eval`: returns its id at once; follow it with status, read it with results.',
    input: {
      config: configInput,
      candidate: z.string().min(1).describe('commit sha, tag or branch of the agent repo'),
      force: z.boolean().optional().describe('re-run even when this exact evaluation already completed'),
    },
    readOnly: false,
    run: async (ctx, a) => {
      const input = await prepareEvalInput(loadEvalConfig(allowedConfig(ctx.configs, a.config)), a.candidate);
      const { mode } = await startOrAttach(ctx.client, input, ctx.taskQueue, a.force ?? false);
      return {
        evalId: input.evalId,
        mode,
        candidate: input.candidate,
        nTasks: input.tasks.length,
        ui: uiLink(ctx.uiUrl, ctx.namespace, input.evalId),
      };
    },
  }),
  tool({
    name: 'status',
    description: "An evaluation's state and progress (tasks done, running, errors), as `vero status --json`.",
    input: { evalId },
    readOnly: true,
    run: async (ctx, a) => {
      const d = await ctx.client.workflow.getHandle(requireEvalId(a.evalId, 'status')).describe();
      const progress = await getProgress(ctx.client, a.evalId).then(
        (p) => settledProgress(p, d.status.name),
        () => null,
      );
      return {
        evalId: a.evalId,
        workflowStatus: d.status.name,
        startedAt: d.startTime,
        finishedAt: d.closeTime ?? null,
        progress,
        ui: uiLink(ctx.uiUrl, ctx.namespace, a.evalId),
      };
    },
  }),
  tool({
    name: 'results',
    description:
      "An evaluation's per-task results and score, as `vero results --json`; of one not completed, the rows so far (partial: true).",
    input: { evalId },
    readOnly: true,
    run: async (ctx, a) => {
      const handle = ctx.client.workflow.getHandle(requireEvalId(a.evalId, 'results'));
      if ((await handle.describe()).status.name !== 'COMPLETED') return partialResults(ctx.client, a.evalId);
      return withTasks((await handle.result()) as CandidateResult);
    },
  }),
  tool({
    name: 'compare',
    description:
      'Is B better than A? Paired comparison of two completed evaluations on the tasks both ran, as `vero compare --json`: per-task deltas, the mean delta with a bootstrap 95% interval, McNemar, a verdict.',
    input: {
      a: evalId.describe('evaluation id of A (the reference)'),
      b: evalId.describe('evaluation id of B'),
      passThreshold: z.number().optional().describe('a task passes at this score or above (default 1)'),
    },
    readOnly: true,
    run: async (ctx, args) => {
      const [a, b] = [await completedResult(ctx.client, args.a, 'a'), await completedResult(ctx.client, args.b, 'b')];
      const c = comparePaired(taskScoresOf(a), taskScoresOf(b), { seed: 'vero-compare', passThreshold: args.passThreshold ?? 1 });
      return {
        a: { evalId: a.evalId, candidate: a.candidate, candidateRef: a.candidateRef },
        b: { evalId: b.evalId, candidate: b.candidate, candidateRef: b.candidateRef },
        ...c,
      };
    },
  }),
  tool({
    name: 'cancel',
    description: 'Cancel a running evaluation (its harbor processes are stopped), as `vero cancel`; only evaluation ids.',
    input: { evalId },
    readOnly: false,
    run: async (ctx, a) => cancelEvaluation(ctx.client, a.evalId),
  }),
  tool({
    name: 'set_concurrency',
    description: 'Change how many tasks a running evaluation runs at once, as `vero set-concurrency` (recorded in its history).',
    input: { evalId, concurrency: z.number().int().min(1).max(MAX_CONCURRENCY) },
    readOnly: false,
    run: async (ctx, a) => ({ evalId: a.evalId, ...(await setConcurrency(ctx.client, a.evalId, a.concurrency)) }),
  }),
  tool({
    name: 'pause',
    description:
      'Pause a running evaluation, as `vero pause`: no task starts until resumed; running tasks finish, or with stopRunning are stopped and run again on resume (their Harbor jobs resumed).',
    input: { evalId, stopRunning: z.boolean().optional().describe('also stop the tasks running now (default false)') },
    readOnly: false,
    run: async (ctx, a) => pauseEvaluation(ctx.client, a.evalId, { stopRunning: a.stopRunning ?? false }),
  }),
  tool({
    name: 'resume',
    description: 'Resume a paused evaluation, as `vero resume`: its tasks start again, first those a pause stopped.',
    input: { evalId },
    readOnly: false,
    run: async (ctx, a) => resumeEvaluation(ctx.client, a.evalId),
  }),
  tool({
    name: 'retry',
    description:
      'Run chosen tasks of a finished evaluation again, or queue them in a running one (they run once its tasks have finished), as `vero retry --json` (returns at once): `tasks` by name and/or `errors` (every error row); nothing else re-runs, and the result then says which rows were retried and when.',
    input: {
      evalId,
      tasks: z.array(z.string().min(1)).optional().describe('task names, as in results'),
      errors: z.boolean().optional().describe('also every task whose row is an error'),
    },
    readOnly: false,
    run: async (ctx, a) => retryTasks(ctx.client, a.evalId, { tasks: a.tasks, errors: a.errors }),
  }),
  tool({
    name: 'list',
    description: 'Evaluations with candidates, status and scores, newest first, as `vero list --json`.',
    input: { limit: z.number().int().min(1).max(10_000).optional().describe('at most this many (default 100)') },
    readOnly: true,
    run: async (ctx, a) => listEvaluations(ctx.client, { limit: a.limit ?? 100 }),
  }),
  tool({
    name: 'query',
    description:
      'One read-only SQL statement (SQLite) over the views evaluations, tasks, trials, rewards, errors and spend, as `vero query --json` (docs/query.md): {columns, rows, truncated}.',
    input: {
      sql: z.string().min(1).describe('one SELECT (or WITH … SELECT) statement'),
      maxRows: z.number().int().min(1).max(100_000).optional().describe('at most this many rows (default 1,000)'),
      timeoutSec: z.number().positive().max(600).optional().describe('stop the statement after this many seconds (default 30)'),
    },
    readOnly: true,
    run: async (ctx, a) =>
      queryEvaluations(a.sql, { client: ctx.client, home: ctx.home }, { maxRows: a.maxRows, timeoutSec: a.timeoutSec }),
  }),
  ...RACE_TOOLS,
];
