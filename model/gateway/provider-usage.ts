/**
 * Token usage as each provider API reports it, in a response body or in its stream's events (pure). Fields the
 * upstream did not send stay null: a stream cut off before its usage event is charged its reservation instead.
 */
import type { Endpoint } from './policy';

export interface MeteredUsage {
  input_tokens: number | null;
  cached_input_tokens: number | null;
  output_tokens: number | null;
  /** When the upstream reports a cost (e.g. OpenRouter's `usage.cost`). */
  cost_usd: number | null;
}

export const noUsage = (): MeteredUsage => ({ input_tokens: null, cached_input_tokens: null, output_tokens: null, cost_usd: null });

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/** Later figures replace earlier ones field by field (Anthropic sends input in message_start, output in message_delta). */
function merge(into: MeteredUsage, u: MeteredUsage): MeteredUsage {
  return {
    input_tokens: u.input_tokens ?? into.input_tokens,
    cached_input_tokens: u.cached_input_tokens ?? into.cached_input_tokens,
    output_tokens: u.output_tokens ?? into.output_tokens,
    cost_usd: u.cost_usd ?? into.cost_usd,
  };
}

/** OpenAI chat.completions `usage` object. */
function openAiChatUsage(u: Record<string, unknown>): MeteredUsage {
  return {
    input_tokens: num(u.prompt_tokens),
    cached_input_tokens: num(obj(u.prompt_tokens_details).cached_tokens),
    output_tokens: num(u.completion_tokens),
    cost_usd: num(u.cost),
  };
}

/** OpenAI responses `usage` object. */
function openAiResponsesUsage(u: Record<string, unknown>): MeteredUsage {
  return {
    input_tokens: num(u.input_tokens),
    cached_input_tokens: num(obj(u.input_tokens_details).cached_tokens),
    output_tokens: num(u.output_tokens),
    cost_usd: num(u.cost),
  };
}

/** Anthropic `usage`: cache reads and writes are input too (billed), reported apart from `input_tokens`. */
function anthropicUsage(u: Record<string, unknown>): MeteredUsage {
  const input = num(u.input_tokens);
  const read = num(u.cache_read_input_tokens) ?? 0;
  const created = num(u.cache_creation_input_tokens) ?? 0;
  return {
    input_tokens: input === null ? null : input + read + created,
    cached_input_tokens: input === null ? null : read,
    output_tokens: num(u.output_tokens),
    cost_usd: num(u.cost),
  };
}

/** The usage of a complete (non-streamed) JSON response. */
export function usageOfBody(endpoint: Endpoint, body: unknown): MeteredUsage {
  const u = obj(obj(body).usage);
  if (endpoint === 'chat.completions') return openAiChatUsage(u);
  if (endpoint === 'responses') return openAiResponsesUsage(u);
  return anthropicUsage(u);
}

/** Folds one server-sent event's data into the usage so far. */
export function usageOfEvent(endpoint: Endpoint, so_far: MeteredUsage, data: string): MeteredUsage {
  if (data === '[DONE]') return so_far;
  let event: Record<string, unknown>;
  try {
    event = obj(JSON.parse(data));
  } catch {
    return so_far;
  }
  if (endpoint === 'chat.completions') return event.usage ? merge(so_far, openAiChatUsage(obj(event.usage))) : so_far;
  if (endpoint === 'responses') {
    const response = obj(event.response);
    return response.usage ? merge(so_far, openAiResponsesUsage(obj(response.usage))) : so_far;
  }
  if (event.type === 'message_start') return merge(so_far, anthropicUsage(obj(obj(event.message).usage)));
  if (event.type === 'message_delta' && event.usage) {
    const u = obj(event.usage);
    // message_delta carries the cumulative output (and, lately, input) counts.
    const d = anthropicUsage(u);
    return merge(so_far, { ...d, input_tokens: num(u.input_tokens) === null ? null : d.input_tokens });
  }
  return so_far;
}

/** The request's own output limit, and the field it is in (the gateway lowers it to what the scope has left). */
export function askedOutputTokens(endpoint: Endpoint, body: Record<string, unknown>): { field: string; value: number | null } {
  if (endpoint === 'responses') return { field: 'max_output_tokens', value: num(body.max_output_tokens) };
  if (endpoint === 'messages') return { field: 'max_tokens', value: num(body.max_tokens) };
  if (num(body.max_completion_tokens) !== null) return { field: 'max_completion_tokens', value: num(body.max_completion_tokens) };
  if (num(body.max_tokens) !== null) return { field: 'max_tokens', value: num(body.max_tokens) };
  return { field: 'max_completion_tokens', value: null };
}
