/**
 * The eval sidecar's agent-side protocol as MCP tools (`vero mcp --agent`, inside a compiled task's workbench):
 * eval, status, budget, submit. Each sends the same request to the sidecar as the `vero` command of that name
 * (a request id per evaluation, re-sent while the sidecar restarts), so the sidecar applies the same tiers,
 * budgets and read-only paths, and charges an evaluation once. finalize (the verifier's, with the admin token)
 * is not offered.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { camelCaseKeys } from '../model/json-case';
import { tool, type McpTool } from './mcp-registry';
import { call, callRetrying } from './sidecar-client';

export interface AgentToolContext {
  /** The sidecar (VERO_EVAL_URL in the workbench). */
  url: URL;
}

interface SidecarStatus {
  splits: { split: string; access: string; agent_evaluable: boolean; budget: unknown }[];
}

export const AGENT_TOOLS: McpTool<AgentToolContext>[] = [
  tool({
    name: 'eval',
    description:
      "Evaluate a committed candidate of the agent repo on a split, through the eval sidecar (spends eval budget), as `vero eval --json`: mean score, errors, budget left, and the results' path when the split's tier shows them.",
    input: {
      split: z.string().min(1).describe('the split to evaluate on (the budget tool lists them)'),
      commit: z.string().min(1).optional().describe('commit to evaluate (default HEAD of the agent repo)'),
      numSamples: z.number().int().min(1).optional().describe('evaluate the first N samples only'),
      sampleIds: z.array(z.number().int()).optional().describe('these sample ids only'),
    },
    readOnly: false,
    run: async (ctx, a) =>
      camelCaseKeys(
        await callRetrying(ctx.url, 'POST', '/eval', {
          split: a.split,
          commit: a.commit,
          num_samples: a.numSamples,
          sample_ids: a.sampleIds,
          // One id for this evaluation, re-sent on every retry: the sidecar charges it once.
          request_id: randomUUID(),
        }),
      ),
  }),
  tool({
    name: 'status',
    description: "The task, its splits (tier, whether evaluable, budget left) and the model gateway's usage, as the sidecar's /status.",
    input: {},
    readOnly: true,
    run: async (ctx) => camelCaseKeys(await call(ctx.url, 'GET', '/status')),
  }),
  tool({
    name: 'budget',
    description: 'The splits, what you may see of each, and the eval budget left on each, as `vero budget --json` (its splits).',
    input: {},
    readOnly: true,
    run: async (ctx) => camelCaseKeys({ splits: ((await call(ctx.url, 'GET', '/status')) as SidecarStatus).splits }),
  }),
  tool({
    name: 'submit',
    description: 'Nominate the candidate to be graded at the end (when the task enables it), as `vero submit`.',
    input: { commit: z.string().min(1).optional().describe('commit to submit (default HEAD of the agent repo)') },
    readOnly: false,
    run: async (ctx, a) => camelCaseKeys(await call(ctx.url, 'POST', '/submit', { commit: a.commit })),
  }),
];
