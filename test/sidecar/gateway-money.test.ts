/**
 * The gateway's money invariant, as a property: whatever requests a client sends — any of the three APIs,
 * streamed or not, limit fields and `n` of every JSON type, references to content stored upstream, cut by the
 * client, timed out, many at once — the upstream (a fake that bills as lenient providers and local servers do:
 * numeric strings coerced, 0 as no limit, reasoning, a server reading only `max_tokens`, billed on arrival whatever
 * the client does next) never bills
 * more than the scope's budget, the meter never records less than the upstream billed, and every request the
 * gateway refuses is a named 4xx. Bounded: a fixed seed (VERO_PROPERTY_SEED overrides it; fast-check prints the
 * seed and path of a failure) and few runs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { GatewaySpec } from '../../model/gateway/policy';
import { Gateway } from '../../sidecar/gateway/gateway';
import { digestOf, newToken } from '../../model/gateway/token';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';

const SEED = Number(process.env.VERO_PROPERTY_SEED ?? 20261204);
const RUNS = 24;
/** The refusals the gateway names (docs/gateway.md), by status. */
const NAMED_REFUSALS: Record<number, string[]> = {
  400: ['invalid_request_error', 'input_not_bounded'],
  401: ['authentication_error'],
  402: ['budget_exhausted'],
  403: ['model_not_allowed'],
  429: ['rate_limit_error'],
};

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  await upstream.close();
});

const ROUTES = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' } as const;
type Api = keyof typeof ROUTES;

/** A limit or `n` as a client may send it: every JSON type, and the numbers a lenient upstream reads otherwise. */
const anyLimit = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer({ min: 1, max: 40_000 }),
  fc.constantFrom(0, -1, 10.5, 1e20, '10', '1e1', '0', true, false, [], {}),
);
const anyN = fc.oneof(fc.constant(undefined), fc.integer({ min: 1, max: 12 }), fc.constantFrom(0, '10', 10.5, '1e1', null));

const requestShape = fc.record({
  api: fc.constantFrom<Api>('chat', 'responses', 'messages'),
  model: fc.constantFrom(
    'gpt-test',
    'long-model',
    'reason-model',
    'reason-model',
    'cut-model',
    'stall-model',
    'legacy-model',
    'not-allowed',
  ),
  /** A chat completion's limit by either of its names. */
  chatLimitField: fc.constantFrom('max_completion_tokens', 'max_tokens'),
  stream: fc.constantFrom<unknown>(undefined, true, false, 'true'),
  limit: anyLimit,
  n: anyN,
  stored: fc.constantFrom('none', 'none', 'item_reference', 'audio', 'previous_response_id'),
  text: fc.string({ maxLength: 200 }),
  cut: fc.constantFrom('none', 'none', 'first-chunk', 'at-once'),
  delayMs: fc.integer({ min: 0, max: 40 }),
});
type Shape = typeof requestShape extends fc.Arbitrary<infer T> ? T : never;

/** The body of a shape, in its API's form. */
function bodyOf(s: Shape): Record<string, unknown> {
  const limitField = s.api === 'chat' ? s.chatLimitField : s.api === 'responses' ? 'max_output_tokens' : 'max_tokens';
  const body: Record<string, unknown> = { model: s.model };
  if (s.api === 'responses')
    body.input =
      s.stored === 'item_reference'
        ? [
            { type: 'item_reference', id: 'msg_1' },
            { role: 'user', content: s.text },
          ]
        : s.text;
  else
    body.messages = [
      { role: 'user', content: s.text || 'hi' },
      ...(s.stored === 'audio' && s.api === 'chat'
        ? [
            { role: 'assistant', audio: { id: 'audio_1' } },
            { role: 'user', content: 'go on' },
          ]
        : []),
    ];
  if (s.stored === 'previous_response_id' && s.api === 'responses') body.previous_response_id = 'resp_1';
  if (s.stream !== undefined) body.stream = s.stream;
  if (s.limit !== undefined) body[limitField] = s.limit;
  if (s.n !== undefined) body.n = s.n;
  return body;
}

/** Sends one request as the shape says (cut or not); the refusal it got, if the client saw one. */
async function send(base: string, token: string, s: Shape): Promise<{ status: number; type?: string } | null> {
  await new Promise((r) => setTimeout(r, s.delayMs));
  const abort = new AbortController();
  try {
    const res = await fetch(`${base}${ROUTES[s.api]}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(bodyOf(s)),
      signal: abort.signal,
    });
    if (s.cut !== 'none') {
      if (s.cut === 'first-chunk') await res.body?.getReader().read();
      abort.abort();
      return null;
    }
    const text = await res.text();
    if (res.status < 400) return null;
    const parsed = JSON.parse(text) as { error?: { type?: string } };
    return { status: res.status, ...(parsed.error?.type ? { type: parsed.error.type } : {}) };
  } catch {
    return null; // the client's own cut, or a stream the upstream cut (seen by the client as an error)
  }
}

/** Waits until the gateway holds no reservation: every request it admitted has reached the upstream and settled. */
async function settled(gw: Gateway): Promise<void> {
  for (;;) {
    const [c, u] = [gw.meter.committed('producer'), gw.meter.usage('producer')];
    if (c.input_tokens === u.input_tokens && c.output_tokens === u.output_tokens) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const budgets = fc.record({
  max_input_tokens: fc.integer({ min: 500, max: 300_000 }),
  max_output_tokens: fc.integer({ min: 50, max: 60_000 }),
  max_concurrency: fc.integer({ min: 1, max: 8 }),
});

describe('the gateway never lets the upstream bill more than the budget', () => {
  it('holds for any request shapes, cuts, timeouts and concurrency (property)', async () => {
    await fc.assert(
      fc.asyncProperty(budgets, fc.array(requestShape, { minLength: 1, maxLength: 6 }), async (budget, shapes) => {
        upstream.billed.input_tokens = 0;
        upstream.billed.output_tokens = 0;
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-gw-money-'));
        const token = newToken('producer');
        const models = ['gpt-test', 'long-model', 'reason-model', 'cut-model', 'stall-model', 'legacy-model'];
        const s = GatewaySpec.parse({
          port: 1,
          upstreams: {
            openai: { base_url: upstream.url, key_env: 'K_OPENAI' },
            anthropic: { base_url: upstream.url, key_env: 'K_ANTHROPIC' },
          },
          scopes: { producer: { models, ...budget } },
          request_timeout: 0.8,
        });
        const env = { K_OPENAI: 'sk-a', K_ANTHROPIC: 'sk-b', VERO_GATEWAY_PRODUCER_TOKEN_SHA256: digestOf(token) };
        const gw = await Gateway.start(s, dir, env, () => undefined, { host: '127.0.0.1', port: 0 });
        try {
          const answers = await Promise.all(shapes.map((shape) => send(`http://127.0.0.1:${gw.port}`, token, shape)));
          await settled(gw);
          // Every refusal the client saw is a named 4xx, or a timeout of the model that never answers.
          for (const [i, a] of answers.entries()) {
            if (!a) continue;
            if (a.status === 504 && shapes[i]!.model === 'stall-model') continue;
            expect({ shape: shapes[i], ...a, named: (NAMED_REFUSALS[a.status] ?? []).includes(a.type ?? '') }).toMatchObject({
              named: true,
            });
          }
          expect(upstream.billed.input_tokens).toBeLessThanOrEqual(budget.max_input_tokens);
          expect(upstream.billed.output_tokens).toBeLessThanOrEqual(budget.max_output_tokens);
          const metered = gw.meter.usage('producer');
          expect(metered.input_tokens).toBeGreaterThanOrEqual(upstream.billed.input_tokens);
          expect(metered.output_tokens).toBeGreaterThanOrEqual(upstream.billed.output_tokens);
        } finally {
          await gw.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  }, 120_000);
});
