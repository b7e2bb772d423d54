/**
 * The race as MCP tools (`vero mcp`): `race` starts (or attaches to) a race of candidates as `vero race` does and
 * returns at once; `race_status` reads its state, then its result. Configs: only those the server allows.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { z } from 'zod';
import { prepareRaceInput, RACE_ID, raceState, startRace } from '../client/race-client';
import { loadEvalConfig } from '../infra/eval-config-file';
import { causeChain, ConfigError, exitCodeForFailure, ExitCode, failureTypes, WorkflowRunFailedError } from '../model/errors';
import { allowedConfig, configInput } from './mcp-configs';
import { type EvalToolContext, type McpTool, tool } from './mcp-registry';

/** A race that failed, was terminated or timed out: said with its cause chain, typed
 * as its cause (a config failure: a ConfigError; else the workflow's failure). */
const endedWhy =
  (raceId: string) =>
  (e: unknown): never => {
    if (!(e instanceof WorkflowFailedError)) throw e;
    const why = `race ${raceId} ended without a result: ${causeChain(e.cause) || e.message}`;
    const config = failureTypes(e).some((t) => exitCodeForFailure(t) === ExitCode.badInput);
    throw config ? new ConfigError(why) : new WorkflowRunFailedError(why);
  };

export const RACE_TOOLS: McpTool<EvalToolContext>[] = [
  tool({
    name: 'race',
    description:
      'Race candidate commits on the same tasks in one shared random order, eliminating each once it is worse than the leader at the chosen confidence, as `vero race --json` (returns at once with the race id; follow it with race_status). docs/race.md.',
    input: {
      candidates: z.array(z.string().min(1)).min(2).max(64).describe('commit shas, tags or branches of the agent repo'),
      config: configInput,
      confidence: z.number().gt(0.5).lt(1).optional().describe('confidence of every elimination (default 0.95)'),
      margin: z.number().min(0).max(1).optional().describe('stop once no racing candidate can be this much better (default 0)'),
      seed: z.string().min(1).max(200).optional().describe('seed of the shared task order (default vero-race)'),
      onEliminated: z.enum(['stop', 'finish']).optional().describe("an eliminated candidate's running tasks (default stop)"),
      maxCostUsd: z.number().positive().optional().describe('stop starting tasks once the race has spent this much'),
    },
    readOnly: false,
    run: async (ctx, a) => {
      const input = await prepareRaceInput(loadEvalConfig(allowedConfig(ctx.configs, a.config)), a.candidates, {
        confidence: a.confidence ?? 0.95,
        margin: a.margin ?? 0,
        seed: a.seed ?? 'vero-race',
        onEliminated: a.onEliminated ?? 'stop',
        ...(a.maxCostUsd !== undefined ? { maxCostUsd: a.maxCostUsd } : {}),
      });
      const mode = await startRace(ctx.client, input, ctx.taskQueue);
      return { raceId: input.raceId, mode, candidates: input.candidates.map((c) => ({ candidateRef: c.candidateRef, evalId: c.evalId })) };
    },
  }),
  tool({
    name: 'race_status',
    description:
      "A race's state while it runs (phase, decided tasks, candidates racing or eliminated), then its result, as `vero race --json`.",
    input: { raceId: z.string().regex(RACE_ID, 'a race id: race-<16 hex digits>, as race returns it') },
    readOnly: true,
    run: async (ctx, a) => raceState(ctx.client, a.raceId).catch(endedWhy(a.raceId)),
  }),
];
