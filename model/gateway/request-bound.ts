/**
 * What one model request can cost at most, read from its body before it is sent (pure): an input bound that
 * covers its text (a text token is at least one byte of the serialized body), its images (a fixed bound each: the
 * providers rescale an image before counting it) and the hidden prompt tools add; how many outputs it asks for
 * (`n`, `best_of`); and why its input cannot be bounded at all, when it cannot (server-side conversation state,
 * items and audio stored upstream and referred to by id, files and documents, tools that fetch content on the
 * server).
 */
import type { Endpoint } from './policy';
import type { RequestBound } from './request-bound-type';

/** Input tokens one image counts for (above what current providers charge for one rescaled image). */
export const IMAGE_INPUT_TOKENS = 8000;
/** Input tokens the providers' hidden tool-use prompt can add to a request with tools, and each typed tool. */
const TOOLS_INPUT_TOKENS = 1024;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : 1);

/** Content parts counted by a fixed bound (images) and those whose cost no bound covers (files, documents). */
const IMAGE_PARTS = new Set(['image_url', 'input_image', 'image']);
const UNBOUNDED_PARTS = new Set(['file', 'input_file', 'document', 'container_upload']);
/** Tools the client runs itself (their definitions are text in the body). */
const CLIENT_TOOLS = new Set(['function', 'custom']);
/** Anthropic's server tools: their results (searches, fetched pages, executions) are input the body does not hold. */
const ANTHROPIC_SERVER_TOOL = /^(web_search|web_fetch|code_execution|tool_search|mcp)/;

/** The body with every image part replaced by a placeholder; counts images and unboundable parts on the way. */
function stripParts(v: unknown, seen: { images: number; unbounded: string[] }): unknown {
  if (Array.isArray(v)) return v.map((x) => stripParts(x, seen));
  if (!isObj(v)) return v;
  const type = typeof v.type === 'string' ? v.type : '';
  if (IMAGE_PARTS.has(type)) {
    seen.images++;
    return {};
  }
  if (UNBOUNDED_PARTS.has(type)) seen.unbounded.push(`a "${type}" content part`);
  if (type === 'item_reference') seen.unbounded.push('an `item_reference` input item (content the upstream stores)');
  if (isObj(v.audio) && v.audio.id !== undefined) seen.unbounded.push('a stored audio reference (`audio.id`)');
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, stripParts(x, seen)]));
}

/** The server-side tools of a request's `tools`, by name. */
function serverTools(endpoint: Endpoint, tools: unknown): { typed: number; server: string[] } {
  const out = { typed: 0, server: [] as string[] };
  if (!Array.isArray(tools)) return out;
  for (const t of tools) {
    const type = isObj(t) && typeof t.type === 'string' ? t.type : undefined;
    if (type === undefined || CLIENT_TOOLS.has(type)) continue;
    if (endpoint === 'messages' && !ANTHROPIC_SERVER_TOOL.test(type)) out.typed++;
    else out.server.push(type);
  }
  return out;
}

export function requestBound(endpoint: Endpoint, body: Record<string, unknown>): RequestBound {
  const seen = { images: 0, unbounded: [] as string[] };
  const textBytes = Buffer.byteLength(JSON.stringify(stripParts(body, seen)));
  const tools = serverTools(endpoint, body.tools);
  const reasons = [...new Set(seen.unbounded)];
  if (tools.server.length) reasons.push(`server-side tools (${tools.server.join(', ')})`);
  if (endpoint === 'messages' && (body.mcp_servers !== undefined || body.container !== undefined))
    reasons.push('server-side MCP servers or a container');
  if (endpoint === 'chat.completions' && body.web_search_options !== undefined) reasons.push('web_search_options');
  if (endpoint === 'responses' && body.prompt !== undefined) reasons.push('a stored prompt (`prompt`)');
  const serverState = endpoint === 'responses' && (body.previous_response_id != null || body.conversation != null);
  if (serverState)
    reasons.unshift(
      'a conversation kept by the upstream (`previous_response_id` / `conversation`): the gateway keeps no response store and cannot see what it holds',
    );
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  return {
    input_tokens: textBytes + seen.images * IMAGE_INPUT_TOKENS + (hasTools ? TOOLS_INPUT_TOKENS : 0) + tools.typed * TOOLS_INPUT_TOKENS,
    outputs: Math.max(count(body.n), count(body.best_of)),
    unbounded: reasons.length ? reasons.join('; ') : null,
    serverState,
  };
}
