/** The shape of `vero mcp`'s tool registries (cli/mcp-tools.ts, cli/mcp-race-tools.ts, cli/agent-mcp-tools.ts). */
import type { Client } from '@temporalio/client';
import type { z } from 'zod';
import type { AllowedConfigs } from './mcp-configs';

/** What a tool answers with: the connection `vero mcp` was started with. */
export interface EvalToolContext {
  client: Client;
  namespace: string;
  taskQueue: string;
  uiUrl: string | null;
  /** The home whose result files `query` reads too (that of -c vero.yaml). */
  home: string | null;
  /** The only configs start_eval and race may use (cli/mcp-configs.ts): -c and the operator's --allow-config. */
  configs: AllowedConfigs;
}

export interface McpTool<Ctx> {
  name: string;
  description: string;
  input: z.ZodRawShape;
  /** Whether the tool only reads (MCP's readOnlyHint: a client may call it without asking). */
  readOnly: boolean;
  run: (ctx: Ctx, args: Record<string, unknown>) => Promise<unknown>;
}

/** A registry entry, with its arguments typed from its input shape. */
export function tool<Ctx, S extends z.ZodRawShape>(
  t: Omit<McpTool<Ctx>, 'input' | 'run'> & { input: S; run: (ctx: Ctx, args: z.infer<z.ZodObject<S>>) => Promise<unknown> },
): McpTool<Ctx> {
  return t as unknown as McpTool<Ctx>;
}
