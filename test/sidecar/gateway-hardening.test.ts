/**
 * The gateway tried from outside: input that refers to content stored upstream, limits of the wrong JSON type,
 * bodies sent before (or instead of) a token, bodies nested deep, a reasoning stream the client cuts, and a
 * gateway port already taken. Each is answered with a named 4xx (or a named start-up error) and never lets the
 * upstream bill more than the scope's budget.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { GatewaySpec } from '../../model/gateway/policy';
import { ConfigError } from '../../model/errors';
import { Gateway } from '../../sidecar/gateway/gateway';
import { digestOf, newToken } from '../../model/gateway/token';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';

const MODELS = ['gpt-test', 'claude-test', 'long-model', 'reason-model', 'stall-model'];

let upstream: FakeUpstream;
const open: Gateway[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  await upstream.close();
});
afterEach(async () => {
  while (open.length) await open.pop()!.close();
  while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
  upstream.seen.length = 0;
  upstream.billed.input_tokens = 0;
  upstream.billed.output_tokens = 0;
});

function spec(producer: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): GatewaySpec {
  return GatewaySpec.parse({
    port: 1,
    upstreams: {
      openai: { base_url: upstream.url, key_env: 'TEST_OPENAI_KEY' },
      anthropic: { base_url: upstream.url, key_env: 'TEST_ANTHROPIC_KEY' },
    },
    scopes: { producer: { models: MODELS, ...producer } },
    request_timeout: 5,
    ...extra,
  });
}

async function startGateway(s: GatewaySpec, port = 0) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-gwh-'));
  dirs.push(dir);
  const token = newToken('producer');
  const env = { TEST_OPENAI_KEY: 'sk-up', TEST_ANTHROPIC_KEY: 'sk-ant-up', VERO_GATEWAY_PRODUCER_TOKEN_SHA256: digestOf(token) };
  const gw = await Gateway.start(s, dir, env, () => undefined, { host: '127.0.0.1', port });
  open.push(gw);
  return { gw, token, base: `http://127.0.0.1:${gw.port}` };
}

const post = (base: string, route: string, token: string, body: string | object) =>
  fetch(`${base}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** The error a refusal names: its status, type and message, and whether the SDKs may retry it. */
async function refusal(res: Response) {
  const body = (await res.json()) as { error?: { type: string; message: string } };
  return { status: res.status, type: body.error?.type, message: body.error?.message, retry: res.headers.get('x-should-retry') };
}

describe('gateway hardening', () => {
  it('treats Responses item_reference input and stored chat audio as unbounded under an input budget', async () => {
    const { gw, base, token } = await startGateway(spec({ max_input_tokens: 100_000, max_output_tokens: 10_000 }));
    const refs = await post(base, '/v1/responses', token, {
      model: 'gpt-test',
      input: [
        { type: 'item_reference', id: 'msg_a' },
        { type: 'item_reference', id: 'msg_b' },
      ],
    });
    expect(await refusal(refs)).toMatchObject({ status: 400, type: 'input_not_bounded', message: expect.stringMatching(/item_reference/) });
    const audio = await post(base, '/v1/chat/completions', token, {
      model: 'gpt-test',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', audio: { id: 'audio_abc' } },
        { role: 'user', content: 'again' },
      ],
    });
    expect(await refusal(audio)).toMatchObject({ status: 400, type: 'input_not_bounded', message: expect.stringMatching(/audio/) });
    expect(upstream.seen).toHaveLength(0);
    expect(upstream.billed.input_tokens).toBe(0);
    expect(gw.meter.usage('producer')).toMatchObject({ requests: 0, refused_policy: 2 });
  });

  it('refuses every limit field that is not a positive integer, by name, before the upstream', async () => {
    const { base, token } = await startGateway(spec({ max_output_tokens: 10_000 }));
    const user = [{ role: 'user', content: 'hi' }];
    const cases: [string, Record<string, unknown>][] = [
      ['/v1/chat/completions', { n: '10' }],
      ['/v1/chat/completions', { n: 10.5 }],
      ['/v1/chat/completions', { n: '1e1' }],
      ['/v1/chat/completions', { n: 0 }],
      ['/v1/chat/completions', { best_of: '3' }],
      ['/v1/chat/completions', { max_tokens: 0 }],
      ['/v1/chat/completions', { max_tokens: '100' }],
      ['/v1/chat/completions', { max_completion_tokens: -5 }],
      ['/v1/chat/completions', { max_completion_tokens: 1e20 }],
      ['/v1/chat/completions', { stream: 'true' }],
      ['/v1/responses', { max_output_tokens: 0 }],
      ['/v1/responses', { max_output_tokens: true }],
      ['/v1/responses', { reasoning: { max_tokens: '2000' } }],
      ['/v1/messages', { max_tokens: 12.5 }],
      ['/v1/messages', { max_tokens: 100, thinking: { type: 'enabled', budget_tokens: '1e4' } }],
    ];
    for (const [route, fields] of cases) {
      const body =
        route === '/v1/responses' ? { model: 'gpt-test', input: 'hi', ...fields } : { model: 'gpt-test', messages: user, ...fields };
      const res = await post(base, route, token, body);
      const field = Object.keys(fields).at(-1)!;
      const r = await refusal(res);
      expect({ route, fields, ...r }).toMatchObject({
        status: 400,
        type: 'invalid_request_error',
        retry: 'false',
        message: expect.stringContaining(field),
      });
    }
    expect(upstream.seen).toHaveLength(0);
  });

  it('checks the token before reading a body: an unauthenticated body is never parsed, nor waited for', async () => {
    const { base } = await startGateway(spec());
    // Not JSON, without a token: the token is what is wrong.
    const garbage = await post(base, '/v1/chat/completions', 'not-a-token', '{"model": [[[');
    expect(await refusal(garbage)).toMatchObject({ status: 401, type: 'authentication_error' });
    // A body announced at 30 MB and never sent: the refusal comes without it.
    const { port } = new URL(base);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { 'content-type': 'application/json', 'content-length': String(30 << 20), authorization: 'Bearer nope' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('{"model":"gpt-test","messages":[');
      setTimeout(() => {
        req.destroy();
        reject(new Error('no answer without the body'));
      }, 3000);
    });
    expect(status).toBe(401);
  });

  it('answers a body nested too deep, or a model that is not a string, with a named 400 (never a retryable 500)', async () => {
    const { base, token } = await startGateway(spec());
    const deep = `{"model":"gpt-test","messages":[{"role":"user","content":"hi","x":${'['.repeat(5000)}${']'.repeat(5000)}}]}`;
    expect(await refusal(await post(base, '/v1/chat/completions', token, deep))).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      retry: 'false',
      message: expect.stringMatching(/nested/),
    });
    for (const model of [{ toString: 'x' }, { toString: { a: 1 } }, ['gpt-test'], 7]) {
      const res = await post(base, '/v1/chat/completions', token, { model, messages: [] });
      expect(await refusal(res)).toMatchObject({
        status: 400,
        type: 'invalid_request_error',
        retry: 'false',
        message: expect.stringMatching(/model/),
      });
    }
    expect(upstream.seen).toHaveLength(0);
  });

  it.each([
    ['/v1/chat/completions', { max_completion_tokens: 30_000, messages: [{ role: 'user', content: 'think' }] }],
    ['/v1/responses', { max_output_tokens: 30_000, input: 'think' }],
    ['/v1/messages', { max_tokens: 30_000, messages: [{ role: 'user', content: 'think' }] }],
  ])(
    'settles a reasoning stream the client cuts (%s) on the usage the upstream reports, not on what was streamed',
    async (route, fields) => {
      const { gw, base, token } = await startGateway(spec({ max_output_tokens: 50_000 }));
      const abort = new AbortController();
      const res = await fetch(`${base}${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'reason-model', stream: true, ...fields }),
        signal: abort.signal,
      });
      const reader = res.body!.getReader();
      await reader.read(); // the first progress event; then the client goes away
      abort.abort();
      // The gateway keeps reading the upstream: the request settles when the upstream's usage arrives.
      while (
        gw.meter.committed('producer').output_tokens !== gw.meter.usage('producer').output_tokens ||
        upstream.billed.output_tokens === 0
      )
        await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 800));
      expect(upstream.billed.output_tokens).toBe(30_000);
      expect(gw.meter.usage('producer').output_tokens).toBe(30_000);
    },
  );

  it('charges a stream the gateway stops at its timeout its whole reservation (the upstream may bill all of it)', async () => {
    const { gw, base, token } = await startGateway(spec({ max_output_tokens: 50_000 }, { request_timeout: 0.5 }));
    const body = { model: 'stall-model', stream: true, max_completion_tokens: 20_000, messages: [{ role: 'user', content: 'hi' }] };
    // The stream is cut for the client too (never a short stream that looks complete).
    await expect(post(base, '/v1/chat/completions', token, body).then((r) => r.text())).rejects.toThrow();
    while (gw.meter.committed('producer').output_tokens !== gw.meter.usage('producer').output_tokens)
      await new Promise((r) => setTimeout(r, 50));
    expect(upstream.billed.output_tokens).toBe(20_000);
    expect(gw.meter.usage('producer').output_tokens).toBe(20_000);
  });

  it('says a gateway port in use as a config error naming gateway.port (no stack, the state it opened closed)', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const started = startGateway(spec(), port);
      await expect(started).rejects.toThrow(ConfigError);
      await expect(started).rejects.toThrow(new RegExp(`gateway.port: 127.0.0.1:${port} is already in use`));
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});
