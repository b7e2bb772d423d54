/**
 * The gateway's output cap reaches a chat server that reads only `max_tokens`: with the official `openai` client
 * (which sends `max_completion_tokens`, or no limit) through the gateway to a fake server of that kind, the
 * server is sent the cap under both names and bills no more than the scope's output budget. The OpenAI API itself
 * refuses a request that sets both names, so there the cap goes into one.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { GatewaySpec } from '../../model/gateway/policy';
import { Gateway } from '../../sidecar/gateway/gateway';
import { writeOutputCap } from '../../sidecar/gateway/output-cap';
import { digestOf, newToken } from '../../model/gateway/token';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  await upstream.close();
});

describe('a chat server that reads only max_tokens is bounded', () => {
  it.each([
    ['max_completion_tokens', { max_completion_tokens: 5000 }],
    ['no limit', {}],
    ['max_tokens', { max_tokens: 5000 }],
  ])('the official client sending %s: the server gets the cap as max_tokens and bills within the budget', async (_what, limit) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-gw-cap-'));
    const token = newToken('producer');
    const spec = GatewaySpec.parse({
      port: 1,
      upstreams: { openai: { base_url: upstream.url, key_env: 'K_OPENAI' } },
      scopes: { producer: { models: ['legacy-model'], max_output_tokens: 300 } },
    });
    const env = { K_OPENAI: 'sk-a', VERO_GATEWAY_PRODUCER_TOKEN_SHA256: digestOf(token) };
    const gw = await Gateway.start(spec, dir, env, () => undefined, { host: '127.0.0.1', port: 0 });
    try {
      upstream.billed.output_tokens = 0;
      const client = new OpenAI({ apiKey: token, baseURL: `http://127.0.0.1:${gw.port}/v1`, maxRetries: 0 });
      const answer = await client.chat.completions.create({ model: 'legacy-model', messages: [{ role: 'user', content: 'hi' }], ...limit });
      const sent = upstream.seen[upstream.seen.length - 1]!.body;
      expect(sent).toMatchObject({ max_tokens: 300, max_completion_tokens: 300 });
      expect(answer.usage?.completion_tokens).toBe(300);
      expect(upstream.billed.output_tokens).toBeLessThanOrEqual(300);
      expect(gw.meter.usage('producer').output_tokens).toBe(300);
    } finally {
      await gw.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the OpenAI API gets the cap under one name (it refuses both at once)', () => {
  const capped = (endpoint: 'chat.completions' | 'responses', body: Record<string, unknown>, field: string, baseUrl: string) => {
    const payload = { ...body };
    writeOutputCap(payload, { endpoint, field, cap: 100, baseUrl });
    return payload;
  };
  it.each([
    [{}, 'max_completion_tokens', { max_completion_tokens: 100 }],
    [{ max_completion_tokens: 5000 }, 'max_completion_tokens', { max_completion_tokens: 100 }],
    [{ max_tokens: 5000 }, 'max_tokens', { max_tokens: 100 }],
  ])('chat %j at https://api.openai.com', (body, field, want) => {
    expect(capped('chat.completions', body, field, 'https://api.openai.com')).toEqual(want);
  });
  it('any other chat server gets both names; Responses keeps its one limit', () => {
    expect(capped('chat.completions', { max_tokens: 5000 }, 'max_tokens', 'http://127.0.0.1:8080')).toEqual({
      max_tokens: 100,
      max_completion_tokens: 100,
    });
    expect(capped('chat.completions', {}, 'max_completion_tokens', 'https://openrouter.ai/api')).toEqual({
      max_tokens: 100,
      max_completion_tokens: 100,
    });
    expect(capped('responses', {}, 'max_output_tokens', 'http://127.0.0.1:8080')).toEqual({ max_output_tokens: 100 });
  });
});
