/**
 * A fake model provider for tests: a real HTTP server speaking OpenAI's chat.completions and responses and
 * Anthropic's messages, streamed (SSE) or not, with usage fields. Deterministic: every answer has 11 input
 * tokens (2 of them cached) and min(the request's max tokens, 7) output tokens. Models steer faults:
 * `fail-model` answers 500, `stall-model` sends headers and then nothing, `cut-model` streams one event and
 * resets the connection, `slow-model` answers after 1.5 s, `drip-model` streams three chunks 400 ms apart,
 * `long-model` (chat) writes all the output it may — the request's max tokens (5,000 without one) for each of
 * its `n` choices — and `echo-key-model` echoes the key it was sent: in a 401 body, or, streamed, in two halves.
 * A chat completion (not streamed) whose last user message asks "Compute A + B" is answered with the sum.
 *
 * It reads limits and bills as real providers and local servers do: numeric strings and fractions are coerced
 * (`n: "10"` is ten outputs, `max_tokens: "1e1"` ten tokens), a limit of 0 means no limit, content stored
 * upstream (`item_reference` items, stored chat audio, `previous_response_id`) is billed at what it holds
 * (STORED_INPUT_TOKENS each), and every request is billed when it arrives — a client that goes away does not
 * stop the bill (`billed`). `reason-model` reasons: it streams a few small events slowly, then reports all the
 * output it may as reasoning (its limit, REASONING_DEFAULT_OUTPUT without one, times its outputs).
 * `legacy-model` is a server that reads only `max_tokens` (`max_output_tokens` on Responses): it writes all the
 * output it may, LONG_MODEL_DEFAULT_OUTPUT per output without that field, whatever `max_completion_tokens` says.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface FakeUpstream {
  url: string;
  seen: SeenRequest[];
  /** What the upstream billed, over every request it received (whatever became of the client). */
  billed: { input_tokens: number; output_tokens: number };
  close(): Promise<void>;
}

export const FAKE_INPUT_TOKENS = 11;
export const FAKE_CACHED_TOKENS = 2;
export const FAKE_MAX_OUTPUT = 7;

export const LONG_MODEL_DEFAULT_OUTPUT = 5000;
export const REASONING_DEFAULT_OUTPUT = 30_000;
/** What one reference to content stored upstream is billed as input. */
export const STORED_INPUT_TOKENS = 200_000;

/** A limit as a lenient server reads it: coerced to a number and floored; 0, negative or not a number is no limit. */
const coerced = (v: unknown): number | null => {
  const n = Math.floor(Number(v));
  return v === null || v === undefined || typeof v === 'boolean' || !Number.isFinite(n) || n <= 0 ? null : n;
};
const asked = (b: Record<string, unknown>) =>
  b.model === 'legacy-model'
    ? coerced(b.max_tokens ?? b.max_output_tokens)
    : coerced(b.max_completion_tokens ?? b.max_tokens ?? b.max_output_tokens);
const outputsOf = (b: Record<string, unknown>) => Math.max(coerced(b.n) ?? 1, coerced(b.best_of) ?? 1);
const outputTokens = (b: Record<string, unknown>) =>
  b.model === 'long-model' || b.model === 'stall-model' || b.model === 'legacy-model'
    ? (asked(b) ?? LONG_MODEL_DEFAULT_OUTPUT) * outputsOf(b)
    : b.model === 'reason-model'
      ? (asked(b) ?? REASONING_DEFAULT_OUTPUT) * outputsOf(b)
      : b.model === 'cut-model'
        ? 1
        : Math.min(asked(b) ?? FAKE_MAX_OUTPUT, FAKE_MAX_OUTPUT);

/** References to content the upstream keeps, anywhere in the body. */
function storedReferences(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + storedReferences(x), 0);
  if (!v || typeof v !== 'object') return 0;
  const o = v as Record<string, unknown>;
  const own = o.type === 'item_reference' || (o.audio !== null && typeof o.audio === 'object' && 'id' in o.audio) ? 1 : 0;
  return own + Object.values(o).reduce((n: number, x) => n + storedReferences(x), 0);
}
const inputTokens = (b: Record<string, unknown>) =>
  FAKE_INPUT_TOKENS + STORED_INPUT_TOKENS * (storedReferences(b) + (b.previous_response_id ? 1 : 0));

function sse(res: http.ServerResponse, events: { event?: string; data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req-fake' });
  for (const e of events)
    res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`);
  res.end();
}

/** The sum a chat's last user message asks for ("Compute 17 + 25 …"), or null. */
function requestedSum(b: Record<string, unknown>): string | null {
  const users = ((b.messages ?? []) as { role?: string; content?: unknown }[]).filter((m) => m.role === 'user');
  const last = users[users.length - 1]?.content;
  const m = typeof last === 'string' ? /Compute (-?\d+) \+ (-?\d+)/.exec(last) : null;
  return m ? String(Number(m[1]) + Number(m[2])) : null;
}

function chat(b: Record<string, unknown>, res: http.ServerResponse): void {
  const out = outputTokens(b);
  const usage = {
    prompt_tokens: inputTokens(b),
    completion_tokens: out,
    total_tokens: inputTokens(b) + out,
    prompt_tokens_details: { cached_tokens: FAKE_CACHED_TOKENS },
  };
  const base = { id: 'chatcmpl-fake', created: 1, model: b.model };
  if (b.stream) {
    const chunk = (delta: object, finish: string | null) => ({
      ...base,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const withUsage = (b.stream_options as { include_usage?: boolean } | undefined)?.include_usage;
    return sse(res, [
      { data: chunk({ role: 'assistant', content: 'Hello' }, null) },
      { data: chunk({ content: ' world' }, 'stop') },
      ...(withUsage ? [{ data: { ...base, object: 'chat.completion.chunk', choices: [], usage } }] : []),
      { data: '[DONE]' },
    ]);
  }
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-fake' });
  res.end(
    JSON.stringify({
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: requestedSum(b) ?? 'Hello world' }, finish_reason: 'stop' }],
      usage,
    }),
  );
}

function responses(b: Record<string, unknown>, res: http.ServerResponse): void {
  const out = outputTokens(b);
  const response = {
    id: 'resp-fake',
    object: 'response',
    created_at: 1,
    status: 'completed',
    model: b.model,
    output: [
      {
        id: 'msg-1',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello world', annotations: [] }],
      },
    ],
    usage: {
      input_tokens: inputTokens(b),
      input_tokens_details: { cached_tokens: FAKE_CACHED_TOKENS },
      output_tokens: out,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens(b) + out,
    },
  };
  if (b.stream)
    return sse(res, [
      { event: 'response.created', data: { type: 'response.created', response: { ...response, status: 'in_progress', usage: null } } },
      { event: 'response.output_text.delta', data: { type: 'response.output_text.delta', delta: 'Hello world' } },
      { event: 'response.completed', data: { type: 'response.completed', response } },
    ]);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(response));
}

function messages(b: Record<string, unknown>, res: http.ServerResponse): void {
  const out = outputTokens(b);
  const input = inputTokens(b) - FAKE_CACHED_TOKENS; // Anthropic reports cache reads apart from input_tokens
  const message = { id: 'msg_fake', type: 'message', role: 'assistant', model: b.model, stop_reason: null, stop_sequence: null };
  if (b.stream)
    return sse(res, [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            ...message,
            content: [],
            usage: { input_tokens: input, cache_read_input_tokens: FAKE_CACHED_TOKENS, cache_creation_input_tokens: 0, output_tokens: 1 },
          },
        },
      },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello world' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: out } },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req-fake' });
  res.end(
    JSON.stringify({
      ...message,
      stop_reason: 'end_turn',
      content: [{ type: 'text', text: 'Hello world' }],
      usage: { input_tokens: input, cache_read_input_tokens: FAKE_CACHED_TOKENS, cache_creation_input_tokens: 0, output_tokens: out },
    }),
  );
}

/** A reasoning model's stream: small progress events 100 ms apart, then its usage (all of it reasoning), for each API. */
function reasoningStream(path: string, b: Record<string, unknown>, res: http.ServerResponse): void {
  const out = outputTokens(b);
  const input = inputTokens(b);
  const final =
    path === '/v1/responses'
      ? {
          type: 'response.completed',
          response: {
            id: 'resp-fake',
            status: 'completed',
            usage: { input_tokens: input, output_tokens: out, output_tokens_details: { reasoning_tokens: out } },
          },
        }
      : path === '/v1/messages'
        ? { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: input, output_tokens: out } }
        : {
            id: 'x',
            object: 'chat.completion.chunk',
            choices: [],
            usage: { prompt_tokens: input, completion_tokens: out, completion_tokens_details: { reasoning_tokens: out } },
          };
  const progress =
    path === '/v1/messages' ? { type: 'ping' } : { id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {} }] };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let i = 0;
  const tick = () => {
    if (res.destroyed) return;
    if (i++ === 5) return res.end(`data: ${JSON.stringify(final)}\n\n${path === '/v1/chat/completions' ? 'data: [DONE]\n\n' : ''}`);
    res.write(`data: ${JSON.stringify(progress)}\n\n`);
    setTimeout(tick, 100);
  };
  tick();
}

export async function startFakeUpstream(host = '127.0.0.1'): Promise<FakeUpstream> {
  const seen: SeenRequest[] = [];
  const billed = { input_tokens: 0, output_tokens: 0 };
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        /* not JSON */
      }
      const path = (req.url ?? '').split('?')[0]!;
      seen.push({ path, headers: req.headers, body });
      // Billed on arrival: what the client does next does not change it (an upstream error costs nothing).
      if (body.model !== 'fail-model' && body.model !== 'echo-key-model') {
        billed.input_tokens += inputTokens(body);
        billed.output_tokens += outputTokens(body);
      }
      const answer = () => {
        if (body.model === 'reason-model' && body.stream) return reasoningStream(path, body, res);
        if (body.model === 'fail-model') {
          res.writeHead(500, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ error: { message: 'the fake upstream failed', type: 'server_error' } }));
        }
        if (body.model === 'stall-model') {
          res.writeHead(200, { 'content-type': body.stream ? 'text/event-stream' : 'application/json' });
          return res.flushHeaders();
        }
        if (body.model === 'cut-model') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(
            `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hel' } }] })}\n\n`,
          );
          return setTimeout(() => res.socket?.destroy(), 50);
        }
        if (body.model === 'echo-key-model') {
          const key = String(req.headers.authorization ?? req.headers['x-api-key'] ?? '');
          if (!body.stream) {
            res.writeHead(401, { 'content-type': 'application/json', 'x-request-id': key });
            return res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error' } }));
          }
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const event = `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'echo-key-model', choices: [{ index: 0, delta: { content: `key=${key}` }, finish_reason: null }] })}\n\n`;
          const half = event.indexOf(key) + Math.floor(key.length / 2);
          res.write(event.slice(0, half));
          return setTimeout(() => res.end(`${event.slice(half)}data: [DONE]\n\n`), 100);
        }
        if (body.model === 'drip-model') {
          // Three events 400 ms apart: a proxy that buffers shows them all at once.
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          let i = 0;
          const tick = () => {
            if (i === 3) return res.end('data: [DONE]\n\n');
            res.write(
              `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'drip-model', choices: [{ index: 0, delta: { content: String(i++) }, finish_reason: null }] })}\n\n`,
            );
            setTimeout(tick, 400);
          };
          return tick();
        }
        if (path === '/v1/chat/completions') return chat(body, res);
        if (path === '/v1/responses') return responses(body, res);
        if (path === '/v1/messages') return messages(body, res);
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no ${path} here` } }));
      };
      if (body.model === 'slow-model') setTimeout(answer, 1500);
      else answer();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    seen,
    billed,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
