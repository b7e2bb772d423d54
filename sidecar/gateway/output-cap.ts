/**
 * Where the gateway writes a request's output cap. An upstream may read any output limit a request carries, so
 * each one it carries is lowered to the cap. On chat completions the limit has two names, and servers differ in
 * which they read (OpenAI's API reads `max_completion_tokens`, and `max_tokens` on older models; many compatible
 * servers read only `max_tokens`): the cap is written into both, so no chat request goes out unbounded, except
 * to the OpenAI API itself, which refuses a request that sets both (`invalid_parameter_combination`) and, for
 * reasoning models, any `max_tokens`: there it goes into the field the request used, else `max_completion_tokens`.
 */
import type { Endpoint } from '../../model/gateway/policy';

/** The output limits a request may carry (an upstream may read any of them): the gateway's cap lowers each. */
const OUTPUT_LIMIT_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'];
/** A chat completion's output limit, by both its names. */
const CHAT_LIMIT_FIELDS = ['max_tokens', 'max_completion_tokens'];

/** Whether the upstream is the OpenAI API itself (which accepts only one of the chat limit's names at once). */
function isOpenAiApi(baseUrl: string): boolean {
  try {
    return new URL(baseUrl).hostname.toLowerCase() === 'api.openai.com';
  } catch {
    return false;
  }
}

/**
 * Writes the output cap into the request: into `field` (the request's own limit, or where its API reads one), into
 * every other output limit it carries (lowered), and on a chat completion to any upstream but the OpenAI API into
 * both of the limit's names.
 */
export function writeOutputCap(
  payload: Record<string, unknown>,
  o: { endpoint: Endpoint; field: string; cap: number; baseUrl: string },
): void {
  payload[o.field] = o.cap;
  for (const f of OUTPUT_LIMIT_FIELDS) if (typeof payload[f] === 'number') payload[f] = Math.min(payload[f], o.cap);
  if (o.endpoint === 'chat.completions' && !isOpenAiApi(o.baseUrl))
    for (const f of CHAT_LIMIT_FIELDS) payload[f] = typeof payload[f] === 'number' ? Math.min(payload[f], o.cap) : o.cap;
}
