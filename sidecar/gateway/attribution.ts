/**
 * The request log's attribution (`request_log.attribution`, vero's `inference_gateway.request_log_attribution`):
 * each line also names the task the caller's base URL names and the conversation the request belongs to, so what
 * a run's model calls cost can be summed per trial afterwards, without matching their content. A Responses API
 * request chained by `previous_response_id` continues its parent's conversation; any other is keyed by its first
 * user message (lower-cased letters and digits, the first 2048), within one token and task, so two evaluations
 * never share one. Best effort, as vero's: it never fails a request, and it remembers at most 100,000
 * conversations and responses (the oldest are forgotten; a chain onto a forgotten response starts a new one).
 */
import { createHash, randomBytes } from 'node:crypto';

export interface Attribution {
  task?: string;
  thread_id?: string;
  /** SHA-256 of the normalised first user message (a conversation's root). */
  thread_root_digest?: string;
  /** The first 200 characters of that message, for whoever reads the log. */
  root_snippet?: string;
}

const CAP = 100_000;
const DIGEST_CHARS = 2048;
const SNIPPET_CHARS = 200;
/** A response's id, in the first bytes of its body (a JSON object, or the first event of a stream). */
const RESPONSE_ID = /"id"\s*:\s*"([A-Za-z0-9_-]{1,200})"/;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The text of a message's content: a string, or the text of its parts (OpenAI's and Anthropic's shapes). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (typeof part === 'string' ? part : isObj(part) ? (part.text ?? part.content) : undefined))
    .filter((t): t is string => typeof t === 'string')
    .join('\n');
}

/** The conversation's root: its first user turn (system and developer turns are the harness's, the same for every trial). */
function firstUserText(body: Record<string, unknown>): string | null {
  const items = Array.isArray(body.messages) ? body.messages : body.input;
  if (typeof items === 'string') return items || null;
  if (!Array.isArray(items)) return null;
  for (const item of items) if (isObj(item) && item.role === 'user') return contentText(item.content) || null;
  return null;
}

export class RequestAttribution {
  /** Response id → its conversation. */
  private readonly responses = new Map<string, string>();
  /** Token, task and root digest → the conversation. */
  private readonly roots = new Map<string, string>();

  private remember(map: Map<string, string>, key: string, thread: string): void {
    map.delete(key);
    map.set(key, thread);
    if (map.size > CAP) map.delete(map.keys().next().value!);
  }

  /** What a request's log lines carry: its task, and its conversation when one can be told. */
  stamp(tokenId: string, task: string | undefined, body: unknown): Attribution {
    const out: Attribution = task === undefined ? {} : { task };
    try {
      if (!isObj(body)) return out;
      const previous = body.previous_response_id;
      const known = typeof previous === 'string' ? this.responses.get(previous) : undefined;
      if (known) return { ...out, thread_id: known };
      const text = firstUserText(body);
      if (!text) {
        if (typeof previous !== 'string' || !previous) return out;
        const thread = randomBytes(8).toString('hex'); // chained onto a response not seen (or forgotten)
        this.remember(this.responses, previous, thread);
        return { ...out, thread_id: thread };
      }
      const normalised = [...text.toLowerCase()]
        .filter((c) => /[\p{L}\p{N}]/u.test(c))
        .join('')
        .slice(0, DIGEST_CHARS);
      const digest = createHash('sha256').update(normalised).digest('hex');
      const key = JSON.stringify([tokenId, task ?? null, digest]);
      const thread = this.roots.get(key) ?? randomBytes(8).toString('hex');
      this.remember(this.roots, key, thread);
      return { ...out, thread_id: thread, thread_root_digest: digest, root_snippet: text.slice(0, SNIPPET_CHARS) };
    } catch {
      return out;
    }
  }

  /** A Responses API answer: its id continues the conversation of the request it answered. */
  registerResponse(stamp: Attribution, responseText: string | undefined): void {
    if (!stamp.thread_id || !responseText) return;
    const id = RESPONSE_ID.exec(responseText.slice(0, 8192))?.[1];
    if (id) this.remember(this.responses, id, stamp.thread_id);
  }
}
