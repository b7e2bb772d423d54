/**
 * `vero mcp`: the evaluation commands as MCP tools over stdio (cli/mcp-tools.ts), or with `--agent` the eval
 * sidecar's agent-side protocol (cli/agent-mcp-tools.ts), with the official MCP SDK. docs/mcp.md.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Command } from 'commander';
import { AGENT_TOOLS, type AgentToolContext } from './agent-mcp-tools';
import { allowedConfigs } from './mcp-configs';
import { EVAL_TOOLS, type EvalToolContext, type McpTool } from './mcp-tools';
import { commandConfig, configPath, ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { sidecarUrl } from './sidecar-client';

/** An MCP server offering every tool of a registry; a tool's failure is its result (isError), with vero's message. */
function mcpServer<Ctx>(name: string, tools: McpTool<Ctx>[], ctx: Ctx): McpServer {
  const server = new McpServer({ name, version: require('../../package.json').version as string });
  for (const t of tools) {
    server.registerTool(
      t.name,
      { description: t.description, inputSchema: t.input, annotations: { readOnlyHint: t.readOnly } },
      async (args: Record<string, unknown>) => {
        try {
          return { content: [{ type: 'text' as const, text: JSON.stringify(await t.run(ctx, args), null, 2) }] };
        } catch (e) {
          return { isError: true, content: [{ type: 'text' as const, text: `error: ${(e as Error).message}` }] };
        }
      },
    );
  }
  return server;
}

/** Serves until the client closes stdin (or a signal ends the process). */
async function serveStdio(server: McpServer, onClose: () => Promise<void>): Promise<void> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  process.stdin.once('end', () => void server.close());
  await server.connect(transport);
  await closed;
  await onClose();
}

export function registerMcpCommand(program: Command): void {
  withConnection(
    program
      .command('mcp')
      .description(
        `serve vero as MCP tools over stdio (the official MCP SDK): ${EVAL_TOOLS.map((t) => t.name).join(', ')}; with --agent, inside a compiled task, the eval sidecar's ${AGENT_TOOLS.map((t) => t.name).join(', ')}`,
      )
      .option('--agent', "offer the eval sidecar's agent-side tools instead (eval, status, budget, submit), for the optimizer")
      .option('--url <url>', 'with --agent: the sidecar URL (default $VERO_EVAL_URL)')
      .option(
        '--allow-config <file...>',
        'vero.yaml files the client may name in start_eval and race besides -c (each runs its harbor.command as this user)',
      )
      .addHelpText(
        'after',
        `
An MCP client starts it as a stdio server, e.g. {"command": "vero", "args": ["mcp", "-c", "/path/vero.yaml"]}.
The tools answer with the JSON of the matching \`vero … --json\` command; a refusal is a tool error with vero's
message. start_eval and race use the -c config, or one given with --allow-config: a client cannot name another
file (a config runs commands as this user). Tools, inputs and what the server trusts: docs/mcp.md.`,
      ),
  ).action(async (o: ConnectionFlags & { agent?: boolean; url?: string; allowConfig?: string[] }) => {
    if (o.agent) {
      const ctx: AgentToolContext = { url: sidecarUrl(o.url) };
      return serveStdio(mcpServer('vero-agent', AGENT_TOOLS, ctx), async () => undefined);
    }
    const file = configPath(o);
    const configs = allowedConfigs(file, o.allowConfig ?? []);
    const conn = connectionSettings(o);
    const client = await connectTo(conn);
    const ctx: EvalToolContext = {
      client,
      namespace: conn.namespace,
      taskQueue: conn.taskQueue,
      uiUrl: conn.uiUrl,
      home: file ? commandConfig(file).home : null,
      configs,
    };
    await serveStdio(mcpServer('vero', EVAL_TOOLS, ctx), () => client.connection.close());
  });
}
