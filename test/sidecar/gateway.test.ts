/**
 * The inference gateway against a fake upstream (a real HTTP server speaking both APIs), and with the official
 * `openai` and `@anthropic-ai/sdk` clients, unmodified: keys never leave the gateway, every token is metered
 * (streams included), budgets hold under concurrency and across restarts, and scopes are kept apart.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GatewaySpec } from '../../model/gateway/policy';
import { Gateway, FINALIZATION_TOKEN_ID } from '../../sidecar/gateway/gateway';
import { Meter, MAX_TASKS_PER_TOKEN, OVERFLOW_TASK, CUT_STREAM_MARGIN } from '../../sidecar/gateway/meter';
import type { RequestBound } from '../../model/gateway/request-bound-type';
import { digestOf, newToken } from '../../model/gateway/token';
import { readEnvFile } from '../../infra/env-file';
import { FAKE_CACHED_TOKENS, FAKE_INPUT_TOKENS, FAKE_MAX_OUTPUT, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';

const UPSTREAM_KEY = 'sk-real-upstream-key-never-leaves';
const ANTHROPIC_KEY = 'sk-ant-real-key-never-leaves';
const MODELS = [
  'gpt-test',
  'claude-test',
  'fail-model',
  'stall-model',
  'cut-model',
  'slow-model',
  'drip-model',
  'long-model',
  'echo-key-model',
];

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
});

function spec(scopes: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): GatewaySpec {
  const all = { models: MODELS, aliases: { fast: 'gpt-test' } };
  return GatewaySpec.parse({
    port: 1,
    upstreams: {
      openai: { base_url: upstream.url, key_env: 'TEST_OPENAI_KEY' },
      anthropic: { base_url: upstream.url, key_env: 'TEST_ANTHROPIC_KEY' },
    },
    scopes: { producer: all, evaluation: all, finalization: all, ...scopes },
    request_timeout: 2,
    ...extra,
  });
}

async function startGateway(s: GatewaySpec, adminDir?: string, producerToken = newToken('producer')) {
  const dir = adminDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'vero-gw-'));
  if (!adminDir) dirs.push(dir);
  const env = {
    TEST_OPENAI_KEY: UPSTREAM_KEY,
    TEST_ANTHROPIC_KEY: ANTHROPIC_KEY,
    VERO_GATEWAY_PRODUCER_TOKEN_SHA256: digestOf(producerToken),
  };
  const gw = await Gateway.start(s, dir, env, () => undefined, { host: '127.0.0.1', port: 0 });
  open.push(gw);
  return { gw, dir, producerToken, base: `http://127.0.0.1:${gw.port}` };
}

const post = (base: string, route: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

const tokenOf = (envFile: string) => readEnvFile(envFile).OPENAI_API_KEY!;

const textBound = (input_tokens: number): RequestBound => ({ input_tokens, outputs: 1, unbounded: null, serverState: false });

describe('inference gateway', () => {
  it('forwards a chat completion with the upstream key, never the token, and meters its usage', async () => {
    const { gw, base, producerToken } = await startGateway(spec());
    const res = await post(base, '/v1/chat/completions', producerToken, { model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]!.message.content).toBe('Hello world');
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]!.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(upstream.seen[0]!.headers)).not.toContain(producerToken);
    expect(upstream.seen[0]!.body.model).toBe('gpt-test'); // the alias resolved
    expect(gw.meter.usage('producer')).toMatchObject({
      requests: 1,
      input_tokens: FAKE_INPUT_TOKENS,
      cached_input_tokens: FAKE_CACHED_TOKENS,
      output_tokens: FAKE_MAX_OUTPUT,
    });
    expect(gw.meter.usage('evaluation').requests).toBe(0);
  });

  it('streams through the official openai client as events arrive, and meters the stream', async () => {
    const { gw, base, producerToken } = await startGateway(spec());
    const client = new OpenAI({ apiKey: producerToken, baseURL: `${base}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello world');
    // The gateway asked the upstream for the stream's usage, and charged it.
    expect((upstream.seen[0]!.body.stream_options as { include_usage: boolean }).include_usage).toBe(true);
    expect(gw.meter.usage('producer')).toMatchObject({ requests: 1, input_tokens: FAKE_INPUT_TOKENS, output_tokens: FAKE_MAX_OUTPUT });

    // Forwarded as they arrive: the chunks reach the client as far apart as the upstream sent them.
    const arrivals: number[] = [];
    for await (const chunk of await client.chat.completions.create({ model: 'drip-model', messages: [], stream: true }))
      if (chunk.choices[0]?.delta?.content) arrivals.push(Date.now());
    expect(arrivals).toHaveLength(3);
    expect(arrivals[2]! - arrivals[0]!).toBeGreaterThan(600);

    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(expect.arrayContaining(['gpt-test', 'fast']));
  });

  it('speaks Anthropic messages to the official @anthropic-ai/sdk, streamed and not, cache reads counted as input', async () => {
    const { gw, base, producerToken } = await startGateway(spec());
    const client = new Anthropic({ apiKey: producerToken, baseURL: base, maxRetries: 0 });
    const msg = await client.messages.create({ model: 'claude-test', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(msg.content[0]).toMatchObject({ type: 'text', text: 'Hello world' });
    const stream = client.messages.stream({ model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ text: 'Hello world' });
    expect(upstream.seen.map((s) => s.headers['x-api-key'])).toEqual([ANTHROPIC_KEY, ANTHROPIC_KEY]);
    expect(gw.meter.usage('producer')).toMatchObject({
      requests: 2,
      input_tokens: 2 * FAKE_INPUT_TOKENS,
      cached_input_tokens: 2 * FAKE_CACHED_TOKENS,
      output_tokens: 5 + FAKE_MAX_OUTPUT,
    });
  });

  it('meters the responses API, streamed and not', async () => {
    const { gw, base, producerToken } = await startGateway(spec());
    const client = new OpenAI({ apiKey: producerToken, baseURL: `${base}/v1`, maxRetries: 0 });
    const r = await client.responses.create({ model: 'gpt-test', input: 'hi', max_output_tokens: 3 });
    expect(r.output_text).toBe('Hello world');
    const s = await client.responses.create({ model: 'gpt-test', input: 'hi', stream: true });
    const kinds: string[] = [];
    for await (const ev of s) kinds.push(ev.type);
    expect(kinds).toContain('response.completed');
    expect(gw.meter.usage('producer')).toMatchObject({
      requests: 2,
      input_tokens: 2 * FAKE_INPUT_TOKENS,
      output_tokens: 3 + FAKE_MAX_OUTPUT,
    });
  });

  it('refuses unknown tokens, revoked tokens, models outside the scope and paths outside the table, before the upstream', async () => {
    const s = spec({ evaluation: { models: ['gpt-test'] } });
    const { gw, base } = await startGateway(s);
    const chat = { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] };
    expect((await post(base, '/v1/chat/completions', 'vero-producer-forged', chat)).status).toBe(401);
    expect((await post(base, '/v1/chat/completions', UPSTREAM_KEY, chat)).status).toBe(401);
    const evalToken = tokenOf(gw.envFileFor('eval-abc', 'evaluation'));
    const denied = await post(base, '/v1/chat/completions', evalToken, { ...chat, model: 'claude-test' });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { error: { type: string } }).error.type).toBe('model_not_allowed');
    expect((await post(base, '/v1/chat/completions', evalToken, chat)).status).toBe(200);
    gw.endEvaluation('eval-abc');
    expect((await post(base, '/v1/chat/completions', evalToken, chat)).status).toBe(401);
    for (const p of ['/v1/embeddings', '/v1/chat/completions/../../admin', '/v1/../v1/files', '/v2/messages'])
      expect((await post(base, p, evalToken, chat)).status).toBe(404);
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen.every((r) => ['/v1/chat/completions'].includes(r.path))).toBe(true);
  });

  it('never overspends a scope under concurrency, and the official client does not retry a spent budget', async () => {
    const s = spec({ evaluation: { models: ['gpt-test'], max_output_tokens: 50, max_concurrency: 64 } });
    const { gw, base } = await startGateway(s);
    const token = tokenOf(gw.envFileFor('eval-x', 'evaluation'));
    const client = new OpenAI({ apiKey: token, baseURL: `${base}/v1`, maxRetries: 3 });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        client.chat.completions.create({
          model: 'gpt-test',
          max_completion_tokens: FAKE_MAX_OUTPUT,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    const out = gw.meter.usage('evaluation').output_tokens;
    expect(out).toBeLessThanOrEqual(50);
    expect(out).toBe(50); // 7 × 7 and one request lowered to the last token
    expect(ok).toHaveLength(8);
    expect(refused.every((r) => (r.reason as { status?: number }).status === 402)).toBe(true);
    expect(upstream.seen).toHaveLength(8); // refusals were not retried, nor sent upstream
    expect(upstream.seen.map((r) => r.body.max_completion_tokens).sort()).toEqual([1, 7, 7, 7, 7, 7, 7, 7]);
    expect(gw.usageOf('eval-x').refused_budget).toBe(12);

    // The finalization scope is its own: it still works.
    const fin = tokenOf(gw.envFileFor(FINALIZATION_TOKEN_ID, 'finalization'));
    expect((await post(base, '/v1/chat/completions', fin, { model: 'gpt-test', messages: [] })).status).toBe(200);
  });

  it('counts max_requests exactly under concurrency', async () => {
    const { gw, base, producerToken } = await startGateway(
      spec({ producer: { models: ['gpt-test'], max_requests: 5, max_concurrency: 64 } }),
    );
    const statuses = await Promise.all(
      Array.from({ length: 12 }, () =>
        post(base, '/v1/chat/completions', producerToken, { model: 'gpt-test', messages: [] }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(7);
    expect(gw.meter.usage('producer')).toMatchObject({ requests: 5, refused_budget: 7 });
    expect(upstream.seen).toHaveLength(5);
  });

  it('answers 429 (retryable) past the scope concurrency, without holding other scopes back', async () => {
    const { gw, base, producerToken } = await startGateway(spec({ producer: { models: ['slow-model', 'gpt-test'], max_concurrency: 1 } }));
    const slow = post(base, '/v1/chat/completions', producerToken, { model: 'slow-model', messages: [] });
    await new Promise((r) => setTimeout(r, 200));
    const busy = await post(base, '/v1/chat/completions', producerToken, { model: 'gpt-test', messages: [] });
    expect(busy.status).toBe(429);
    expect(busy.headers.get('x-should-retry')).toBe('true');
    const evalToken = tokenOf(gw.envFileFor('eval-y', 'evaluation'));
    const t0 = Date.now();
    expect((await post(base, '/v1/chat/completions', evalToken, { model: 'gpt-test', messages: [] })).status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(1000); // the slow producer request did not hold it
    expect((await slow).status).toBe(200);
  });

  it('a restart never refills a budget, and a request in flight at a crash stays charged', async () => {
    const s = spec({ producer: { models: ['gpt-test'], max_requests: 2, max_output_tokens: 1000 } });
    const first = await startGateway(s);
    expect((await post(first.base, '/v1/chat/completions', first.producerToken, { model: 'gpt-test', messages: [] })).status).toBe(200);
    await first.gw.close();
    open.splice(open.indexOf(first.gw), 1);
    // A crash with one request in flight: its reservation is on disk, never settled.
    const meterFile = path.join(first.dir, 'gateway', 'meter.json');
    const crashed = Meter.open(meterFile);
    const inFlight = crashed.admit('producer', 'producer', s.scopes.producer, textBound(100), 40);
    expect(inFlight.ok).toBe(true);
    await inFlight.durable;
    const again = await startGateway(s, first.dir, first.producerToken);
    expect(again.gw.meter.usage('producer')).toMatchObject({
      requests: 2,
      output_tokens: FAKE_MAX_OUTPUT + 40,
      input_tokens: FAKE_INPUT_TOKENS + 100,
    });
    const res = await post(again.base, '/v1/chat/completions', first.producerToken, { model: 'gpt-test', messages: [] });
    expect(res.status).toBe(402);
    expect(upstream.seen).toHaveLength(1);
  });

  it('passes upstream errors on faithfully, times out a stalled upstream, and charges a cut-off stream its reservation', async () => {
    const { gw, base, producerToken } = await startGateway(spec({ producer: { models: MODELS, max_output_tokens: 1000 } }));
    const failed = await post(base, '/v1/chat/completions', producerToken, { model: 'fail-model', messages: [] });
    expect(failed.status).toBe(500);
    expect(((await failed.json()) as { error: { message: string } }).error.message).toBe('the fake upstream failed');
    expect(gw.meter.usage('producer')).toMatchObject({ requests: 1, output_tokens: 0 });

    const t0 = Date.now();
    const stalled = await post(base, '/v1/chat/completions', producerToken, { model: 'stall-model', max_tokens: 500, messages: [] }).then(
      async (r) => {
        await r.text();
        return 'completed';
      },
      () => 'cut off',
    );
    expect(['cut off', 'completed']).toContain(stalled);
    expect(Date.now() - t0).toBeLessThan(6000); // request_timeout is 2 s

    const cut = await post(base, '/v1/chat/completions', producerToken, {
      model: 'cut-model',
      max_tokens: 30,
      messages: [],
      stream: true,
    }).then(
      (r) =>
        r.text().then(
          () => 'completed',
          () => 'cut off',
        ),
      () => 'cut off',
    );
    expect(cut).toBe('cut off');
    await new Promise((r) => setTimeout(r, 100));
    const u = gw.meter.usage('producer');
    expect(u.requests).toBe(3);
    // The stalled request (reserved up to 500 output) and the cut one (30) are charged what they reserved.
    expect(u.output_tokens).toBe(500 + 30);
  });

  it('meters per task when the base URL names one (evaluation env files carry the {task} placeholder)', async () => {
    const { gw, base } = await startGateway(spec());
    const file = gw.envFileFor('eval-t', 'evaluation');
    expect(readEnvFile(file).OPENAI_BASE_URL).toBe(`${base}/task/{task}/v1`);
    const env = readEnvFile(file, 'org/hello-world');
    expect(env.OPENAI_BASE_URL).toBe(`${base}/task/org%2Fhello-world/v1`);
    const client = new OpenAI({ apiKey: env.OPENAI_API_KEY!, baseURL: env.OPENAI_BASE_URL!, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-test', messages: [] });
    const anthropic = new Anthropic({
      apiKey: env.ANTHROPIC_API_KEY!,
      baseURL: readEnvFile(file, 'count-words').ANTHROPIC_BASE_URL!,
      maxRetries: 0,
    });
    await anthropic.messages.create({ model: 'claude-test', max_tokens: 3, messages: [{ role: 'user', content: 'hi' }] });
    expect(gw.taskUsageOf('eval-t')).toEqual({
      'org/hello-world': expect.objectContaining({ requests: 1, output_tokens: FAKE_MAX_OUTPUT }),
      'count-words': expect.objectContaining({ requests: 1, output_tokens: 3 }),
    });
    expect(gw.usageOf('eval-t')).toMatchObject({ requests: 2, output_tokens: FAKE_MAX_OUTPUT + 3 });
    expect(upstream.seen.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/messages']);
    // A task name is a label only: whatever it says, the upstream path is the table's.
    const odd = await post(base, '/task/..%2F..%2Fetc/v1/chat/completions', env.OPENAI_API_KEY!, { model: 'gpt-test', messages: [] });
    expect(odd.status).toBe(200);
    expect(upstream.seen.at(-1)!.path).toBe('/v1/chat/completions');
    expect((await post(base, '/task/%01/v1/chat/completions', env.OPENAI_API_KEY!, { model: 'gpt-test', messages: [] })).status).toBe(400);
  });

  it('keeps a bounded request log on the admin side: bodies truncated, files rotated', async () => {
    const { base, producerToken, dir } = await startGateway(
      spec({}, { request_log: { max_body_bytes: 40, max_file_bytes: 2048, keep: 2 } }),
    );
    for (let i = 0; i < 12; i++)
      await post(base, '/v1/chat/completions', producerToken, {
        model: 'gpt-test',
        messages: [{ role: 'user', content: 'x'.repeat(500) }],
      });
    const logDir = path.join(dir, 'gateway');
    const files = fs.readdirSync(logDir).filter((f) => f.startsWith('requests.jsonl'));
    expect(files.sort()).toEqual(['requests.jsonl', 'requests.jsonl.1']);
    for (const f of files) expect(fs.statSync(path.join(logDir, f)).size).toBeLessThanOrEqual(2048);
    const line = JSON.parse(fs.readFileSync(path.join(logDir, 'requests.jsonl'), 'utf8').trim().split('\n')[0]!) as {
      request: string;
      usage: unknown;
    };
    expect(line.request).toMatch(/more bytes\)$/);
    expect(line.request.length).toBeLessThan(80);
    expect(line.usage).toMatchObject({ output_tokens: FAKE_MAX_OUTPUT });
    expect(fs.statSync(logDir).mode & 0o077).toBe(0);
  });

  it('refuses to start without an upstream key, naming the variable', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-gw-'));
    dirs.push(dir);
    await expect(Gateway.start(spec(), dir, {}, () => undefined, { host: '127.0.0.1', port: 0 })).rejects.toThrow(
      /gateway.upstreams.openai.key_env: TEST_OPENAI_KEY is not set[\s\S]*TEST_ANTHROPIC_KEY/,
    );
  });

  it('reserves what a request can cost: n outputs, images, and no server-side conversation under an input budget', async () => {
    const { gw, base } = await startGateway(
      spec({ evaluation: { models: ['long-model', 'gpt-test'], max_output_tokens: 2000, max_input_tokens: 6000 } }),
    );
    const token = tokenOf(gw.envFileFor('eval-n', 'evaluation'));
    const client = new OpenAI({ apiKey: token, baseURL: `${base}/v1`, maxRetries: 0 });
    // Ten outputs of up to 500 tokens each against 2,000 left: each output is lowered to 200.
    const user = [{ role: 'user' as const, content: 'hi' }];
    await client.chat.completions.create({ model: 'long-model', n: 10, max_completion_tokens: 500, messages: user });
    expect(upstream.seen[0]!.body.max_completion_tokens).toBe(200);
    expect(gw.meter.usage('evaluation').output_tokens).toBe(2000);
    const more = client.chat.completions.create({ model: 'long-model', n: 2, messages: user });
    await expect(more).rejects.toMatchObject({ status: 402 });
    expect(gw.meter.usage('evaluation').output_tokens).toBe(2000);

    // An image costs more than its URL's bytes: it is reserved at a bound, which 6,000 input tokens cannot cover.
    const image = client.chat.completions.create({
      model: 'gpt-test',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
    });
    await expect(image).rejects.toMatchObject({ status: 402 });
    // A conversation kept upstream cannot be bounded: refused with a message that says why, before the upstream.
    const continued = client.responses.create({ model: 'gpt-test', input: 'and then?', previous_response_id: 'resp_abc' });
    await expect(continued).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/previous_response_id.*no response store/),
    });
    expect(upstream.seen).toHaveLength(1);
    expect(gw.usageOf('eval-n')).toMatchObject({ refused_budget: 2, refused_policy: 1 });
  });

  it('streams n outputs without a limit within the budget (the official client, streaming)', async () => {
    const { gw, base, producerToken } = await startGateway(spec({ producer: { models: ['long-model'], max_output_tokens: 1000 } }));
    const client = new OpenAI({ apiKey: producerToken, baseURL: `${base}/v1`, maxRetries: 0 });
    for await (const chunk of await client.chat.completions.create({ model: 'long-model', n: 4, messages: [], stream: true })) void chunk;
    expect(upstream.seen[0]!.body.max_completion_tokens).toBe(250);
    expect(gw.meter.usage('producer').output_tokens).toBe(1000);
  });

  it('answers a request continuing a server-side conversation with a warning when the scope has no input budget', async () => {
    const { base, producerToken } = await startGateway(spec());
    const client = new OpenAI({ apiKey: producerToken, baseURL: `${base}/v1`, maxRetries: 0 });
    const { data, response } = await client.responses
      .create({ model: 'gpt-test', input: 'and then?', previous_response_id: 'resp_abc' })
      .withResponse();
    expect(data.output_text).toBe('Hello world');
    expect(response.headers.get('x-vero-gateway-warning')).toMatch(/previous_response_id.*no response store/);
  });

  it('routes every task name Harbor accepts, and counts a refused call against its task', async () => {
    const { gw } = await startGateway(spec({ evaluation: { models: ['gpt-test', 'claude-test'] } }));
    const file = gw.envFileFor('eval-names', 'evaluation');
    const names = ['my task', 'tâche-é', 'a[1]', 'c++', 'cost$', '-leading', 'x'.repeat(180), 'org/ü name', '日本語'.repeat(60)];
    for (const name of names) {
      const env = readEnvFile(file, name);
      const openai = new OpenAI({ apiKey: env.OPENAI_API_KEY!, baseURL: env.OPENAI_BASE_URL!, maxRetries: 0 });
      await openai.chat.completions.create({ model: 'gpt-test', messages: [] });
      const anthropic = new Anthropic({ apiKey: env.ANTHROPIC_API_KEY!, baseURL: env.ANTHROPIC_BASE_URL!, maxRetries: 0 });
      await anthropic.messages.stream({ model: 'claude-test', max_tokens: 3, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    }
    const perTask = gw.taskUsageOf('eval-names');
    expect(Object.keys(perTask).sort()).toEqual([...names].sort());
    for (const name of names) expect(perTask[name]).toMatchObject({ requests: 2, output_tokens: FAKE_MAX_OUTPUT + 3 });
    // A call the scope refuses is visible on the token and its task (the evaluation is then invalid).
    const env = readEnvFile(file, 'my task');
    const openai = new OpenAI({ apiKey: env.OPENAI_API_KEY!, baseURL: env.OPENAI_BASE_URL!, maxRetries: 0 });
    await expect(openai.chat.completions.create({ model: 'not-allowed', messages: [] })).rejects.toMatchObject({ status: 403 });
    expect(gw.taskUsageOf('eval-names')['my task']).toMatchObject({ refused_policy: 1 });
    expect(gw.usageOf('eval-names').refused_policy).toBe(1);
  });

  it('gives harnesses that read other variables (openhands-sdk, goose) the same token and gateway', async () => {
    const { gw } = await startGateway(spec({ evaluation: { models: ['gpt-test'] } }));
    const env = readEnvFile(gw.envFileFor('eval-h', 'evaluation'), 'count words');
    expect(env.LLM_API_KEY).toBe(env.OPENAI_API_KEY);
    const viaLlm = new OpenAI({ apiKey: env.LLM_API_KEY!, baseURL: env.LLM_BASE_URL!, maxRetries: 0 });
    await viaLlm.chat.completions.create({ model: 'gpt-test', messages: [] });
    // goose joins OPENAI_BASE_PATH to OPENAI_HOST as a URL reference.
    const gooseUrl = new URL(env.OPENAI_BASE_PATH!, `${env.OPENAI_HOST!}/`).toString();
    const res = await post(gooseUrl, '', env.OPENAI_API_KEY!, { model: 'gpt-test', messages: [] });
    expect(res.status).toBe(200);
    expect(gw.taskUsageOf('eval-h')['count words']).toMatchObject({ requests: 2 });
  });

  it('charges a stream cut off without max_tokens what it streamed plus a margin, not the whole budget', async () => {
    const { gw, base, producerToken } = await startGateway(spec({ producer: { models: ['cut-model'], max_output_tokens: 50000 } }));
    const client = new OpenAI({ apiKey: producerToken, baseURL: `${base}/v1`, maxRetries: 0 });
    const read = async () => {
      for await (const chunk of await client.chat.completions.create({ model: 'cut-model', messages: [], stream: true })) void chunk;
    };
    await expect(read()).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 100));
    const out = gw.meter.usage('producer').output_tokens;
    expect(out).toBeGreaterThan(CUT_STREAM_MARGIN);
    expect(out).toBeLessThan(CUT_STREAM_MARGIN + 1000);
  });

  it('never relays or logs the upstream key, even when the upstream echoes it (bodies, headers, streams)', async () => {
    const { base, producerToken, dir } = await startGateway(spec());
    const client = new OpenAI({ apiKey: producerToken, baseURL: `${base}/v1`, maxRetries: 0 });
    const failed = await post(base, '/v1/chat/completions', producerToken, { model: 'echo-key-model', messages: [] });
    expect(failed.status).toBe(401);
    const body = await failed.text();
    expect(body).toContain('Incorrect API key provided');
    expect(body).not.toContain(UPSTREAM_KEY);
    expect(failed.headers.get('x-request-id')).not.toContain(UPSTREAM_KEY);
    let streamed = '';
    for await (const chunk of await client.chat.completions.create({ model: 'echo-key-model', messages: [], stream: true }))
      streamed += chunk.choices[0]?.delta?.content ?? '';
    expect(streamed).toMatch(/^key=Bearer \[redacted upstream key\]$/);
    await new Promise((r) => setTimeout(r, 50));
    const logged = fs.readFileSync(path.join(dir, 'gateway', 'requests.jsonl'), 'utf8');
    expect(logged).toContain('Incorrect API key provided');
    expect(logged).not.toContain(UPSTREAM_KEY);
  });

  it('answers GET /status without a token with numbers only', async () => {
    const { base } = await startGateway(
      spec({ producer: { models: ['gpt-test'], aliases: { secret_alias: 'gpt-test' }, max_requests: 3 } }),
    );
    const status = await (await fetch(`${base}/status`)).text();
    expect(status).not.toMatch(/gpt-test|secret_alias|claude-test/);
    expect(JSON.parse(status)).toMatchObject({ scopes: { producer: { limits: { max_requests: 3 }, usage: { requests: 0 } } } });
  });

  it('keeps the meter bounded and incremental: capped task labels, appended records, a torn last line survived', async () => {
    const s = spec({ producer: { models: ['gpt-test'] } });
    const first = await startGateway(s);
    const meterFile = path.join(first.dir, 'gateway', 'meter.json');
    const snapshotBefore = fs.readFileSync(meterFile, 'utf8');
    // The tasks a token names are labels up to a bound; the rest are counted together.
    const { meter } = first.gw;
    for (let i = 0; i < MAX_TASKS_PER_TOKEN + 50; i++) {
      const a = meter.admit('producer', 'producer', s.scopes.producer, textBound(10), 5, `t-${i}`);
      meter.settle(a.reservationId!, { kind: 'unknown' });
    }
    expect(Object.keys(meter.taskUsage('producer'))).toHaveLength(MAX_TASKS_PER_TOKEN + 1);
    expect(meter.taskUsage('producer')[OVERFLOW_TASK]).toMatchObject({ requests: 50 });
    const res = await post(first.base, '/task/t-0/v1/chat/completions', first.producerToken, { model: 'gpt-test', messages: [] });
    expect(res.status).toBe(200);
    // Each record was appended to the log; the snapshot was not rewritten.
    await meter.flush();
    expect(fs.readFileSync(meterFile, 'utf8')).toBe(snapshotBefore);
    expect(fs.readFileSync(`${meterFile}.log`, 'utf8').trim().split('\n')).toHaveLength(2 * (MAX_TASKS_PER_TOKEN + 51));
    await first.gw.close();
    open.splice(open.indexOf(first.gw), 1);
    fs.appendFileSync(`${meterFile}.log`, '{"seq": 999999, "op": "adm'); // a write torn by a crash
    const again = await startGateway(s, first.dir, first.producerToken);
    expect(again.gw.meter.usage('producer')).toMatchObject({
      requests: MAX_TASKS_PER_TOKEN + 51,
      output_tokens: (MAX_TASKS_PER_TOKEN + 50) * 5 + FAKE_MAX_OUTPUT,
    });
    expect(again.gw.taskUsageOf('producer')['t-0']).toMatchObject({ requests: 2 });
    expect(fs.readFileSync(`${meterFile}.log`, 'utf8')).toBe('');
  });

  it('a reservation survives kill -9 of the process that made it (charged in full at the next start)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-gw-kill-'));
    dirs.push(dir);
    const meterFile = path.join(dir, 'meter.json');
    const s = spec({ producer: { models: ['gpt-test'], max_output_tokens: 1000 } });
    // The built meter (dist/), in a process of its own: it reserves, says so once the reservation is durable, and
    // is then killed without a chance to write anything more.
    const script = `
      const { Meter } = require(${JSON.stringify(path.resolve('dist/sidecar/gateway/meter.js'))});
      const m = Meter.open(${JSON.stringify(meterFile)});
      const policy = ${JSON.stringify(s.scopes.producer)};
      const a = m.admit('producer', 'producer', policy, { input_tokens: 100, outputs: 1, unbounded: null, serverState: false }, 40, 'task a');
      a.durable.then(() => process.stdout.write('reserved\\n'));
      setInterval(() => undefined, 1000);`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((r) => child.on('exit', r));
    await new Promise<void>((resolve) => child.stdout.on('data', (b: Buffer) => b.toString().includes('reserved') && resolve()));
    child.kill('SIGKILL');
    await exited;
    const meter = Meter.open(meterFile);
    expect(meter.usage('producer')).toMatchObject({ requests: 1, input_tokens: 100, output_tokens: 40 });
    expect(meter.taskUsage('producer')['task a']).toMatchObject({ requests: 1, output_tokens: 40 });
    await meter.close();
  });
});
