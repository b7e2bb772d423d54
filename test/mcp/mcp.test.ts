/**
 * `vero mcp` as an MCP client uses it: the official SDK's client over stdio, against the dev server (evaluations
 * by the Harbor stand-in) and against a real eval sidecar (`--agent`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { EVAL_TOOLS } from '../../cli/mcp-tools';
import { evalFixture } from '../helpers/fixtures';
import { VERO, sleep } from '../helpers/process';
import { commitImprovement, listFiles, setup, startSidecar } from '../helpers/sidecar';
import { address, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(300_000);

async function mcpClient(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'vero-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: VERO,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'ignore',
  });
  await client.connect(transport);
  return client;
}

/** A tool's answer: its JSON, or its error text (isError). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a tool's answer is JSON, checked field by field
type Json = any;
async function callTool(c: Client, name: string, args: Record<string, unknown> = {}): Promise<{ ok: boolean; value: Json }> {
  const r = (await c.callTool({ name, arguments: args }, undefined, { timeout: 240_000 })) as {
    isError?: boolean;
    content: { text: string }[];
  };
  const text = r.content[0]!.text;
  return r.isError ? { ok: false, value: text } : { ok: true, value: JSON.parse(text) };
}

// The two tests share nothing (one serves the dev server's evaluations, the other a sidecar of its own) and mostly
// wait on evaluations: they run side by side (test.concurrent).
test.concurrent('the evaluation commands as tools: start, status, results, compare, query, cancel, pause, retry', async () => {
  const q = uniqueQueue('mcp');
  const f = evalFixture({ taskQueue: q, address: address() });
  await withWorker(q, async () => {
    const c = await mcpClient(['mcp', '-c', f.configFile]);
    try {
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(EVAL_TOOLS.map((t) => t.name).sort());
      expect(tools.find((t) => t.name === 'query')!.annotations?.readOnlyHint).toBe(true);

      const ids: Record<string, string> = {};
      for (const candidate of ['baseline', 'improved']) {
        const started = await callTool(c, 'start_eval', { config: f.configFile, candidate });
        expect(started).toMatchObject({ ok: true, value: { mode: 'started', nTasks: 6 } });
        ids[candidate] = started.value.evalId;
      }
      for (const id of Object.values(ids)) {
        for (let i = 0; ; i++) {
          const s = await callTool(c, 'status', { evalId: id });
          if (s.value.workflowStatus === 'COMPLETED') {
            expect(s.value.progress).toMatchObject({ total: 6, done: 6 });
            break;
          }
          expect(i).toBeLessThan(300);
          await sleep(1000);
        }
      }
      const results = await callTool(c, 'results', { evalId: ids.improved });
      expect(results.value).toMatchObject({ status: 'completed', nTasks: 6, candidateRef: 'improved' });
      expect(results.value.score).toBeCloseTo(0.75, 3);
      expect(results.value.tasks).toHaveLength(6);

      const compared = await callTool(c, 'compare', { a: ids.baseline, b: ids.improved });
      expect(compared.value).toMatchObject({ n: 6, a: { candidateRef: 'baseline' }, b: { candidateRef: 'improved' } });
      expect(compared.value.meanB - compared.value.meanA).toBeCloseTo(results.value.score - 1 / 3, 3);

      const rows = await callTool(c, 'query', {
        sql: `SELECT candidate_ref, n_tasks FROM evaluations WHERE eval_id IN ('${ids.baseline}', '${ids.improved}') ORDER BY candidate_ref`,
      });
      expect(rows.value).toMatchObject({
        columns: ['candidate_ref', 'n_tasks'],
        rows: [
          ['baseline', 6],
          ['improved', 6],
        ],
        truncated: false,
      });
      const write = await callTool(c, 'query', { sql: 'DELETE FROM tasks RETURNING task' });
      expect(write).toEqual({ ok: false, value: 'error: query: attempt to write a readonly database' });

      expect((await callTool(c, 'cancel', { evalId: ids.improved })).value).toMatchObject({
        cancelled: false,
        reason: 'already finished (COMPLETED)',
      });
      // Pause, resume and retry: a finished evaluation cannot be paused; one of its tasks can be run again.
      expect(await callTool(c, 'pause', { evalId: ids.improved, stopRunning: true })).toEqual({
        ok: false,
        value: `error: ${ids.improved} has finished (COMPLETED); it cannot be paused`,
      });
      const retry = await callTool(c, 'retry', { evalId: ids.baseline, tasks: ['hello-world'] });
      expect(retry.value).toMatchObject({ evalId: ids.baseline, tasks: ['hello-world'] });
      for (let i = 0; ; i++) {
        const s = await callTool(c, 'status', { evalId: ids.baseline });
        if (s.value.workflowStatus === 'COMPLETED') break;
        expect(i).toBeLessThan(120);
        await sleep(1000);
      }
      const retried = await callTool(c, 'results', { evalId: ids.baseline });
      expect(retried.value.retries).toEqual([{ at: retry.value.requestedAt, tasks: ['hello-world'] }]);
      expect(retried.value.tasks).toHaveLength(6);
      // Bad input is a tool error with vero's message, not a crash of the server.
      const bad = await callTool(c, 'start_eval', { config: f.configFile, candidate: 'no-such-ref' });
      expect(bad.ok).toBe(false);
      expect(bad.value).toMatch(/--candidate: "no-such-ref" is not a commit of/);
      expect((await callTool(c, 'list', { limit: 50 })).value.map((e: { evalId: string }) => e.evalId)).toEqual(
        expect.arrayContaining(Object.values(ids)),
      );
    } finally {
      await c.close();
    }
  });
});

test.concurrent("the sidecar's agent-side protocol as tools: the same tiers, budgets and submit as the CLI", async () => {
  const s = await setup({ submit_enabled: true });
  const side = await startSidecar(s);
  const c = await mcpClient(['mcp', '--agent'], { VERO_EVAL_URL: side.url });
  try {
    expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual(['budget', 'eval', 'status', 'submit']);
    const budget = await callTool(c, 'budget');
    expect(budget.value.splits.find((x: { split: string }) => x.split === 'validation')).toMatchObject({
      agentEvaluable: true,
      budget: { remainingRunBudget: 3 },
    });

    const candidate = commitImprovement(s.work);
    const ev = await callTool(c, 'eval', { split: 'validation' });
    expect(ev.value).toMatchObject({
      commit: candidate,
      split: 'validation',
      nSamples: 2,
      meanScore: 1,
      budgetRemaining: { remainingRunBudget: 2 },
    });
    // non_viewable: the agent sees the aggregate only, as through the CLI.
    expect(listFiles(path.join(s.cfg.paths.agent_volume, 'results', `validation__${candidate.slice(0, 12)}`))).toEqual(['summary.json']);
    // no_access: refused by the sidecar, nothing charged.
    const hidden = await callTool(c, 'eval', { split: 'test' });
    expect(hidden).toEqual({ ok: false, value: expect.stringMatching(/eval sidecar replied 4\d\d: split "test" is not evaluable/) });
    const status = await callTool(c, 'status');
    expect(status.value.splits.find((x: { split: string }) => x.split === 'validation').budget.remainingRunBudget).toBe(2);
    expect(status.value.task).toBe(s.cfg.task_name);

    expect((await callTool(c, 'submit', { commit: candidate })).value).toEqual({ submittedCommit: candidate });
    expect(JSON.parse(fs.readFileSync(path.join(s.cfg.paths.admin_volume, 'submission.json'), 'utf8')).commit).toBe(candidate);
  } finally {
    await c.close();
    await side.stop();
  }
});
