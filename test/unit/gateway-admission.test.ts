/**
 * The gateway's admission rules and configuration (pure): what a request can cost, how it is reserved, what a
 * refusal says, which variables may hold an upstream key, and what a client of the gateway is given.
 */
import { admit, clientEnvFor, emptyUsage, GatewaySpec, ScopePolicy } from '../../model/gateway/policy';
import { IMAGE_INPUT_TOKENS, requestBound } from '../../model/gateway/request-bound';
import { BuildConfigFile } from '../../compiler/build-config';

const policy = (p: Record<string, unknown>) => ScopePolicy.parse({ models: ['m'], ...p });
const spent = (u: Partial<ReturnType<typeof emptyUsage>>) => ({ ...emptyUsage(), ...u });

describe('request bound', () => {
  it('bounds text by bytes, each image by a fixed bound (not its data), and multiplies outputs by n / best_of', () => {
    const text = requestBound('chat.completions', { model: 'm', messages: [{ role: 'user', content: 'hello' }] });
    expect(text).toMatchObject({ outputs: 1, unbounded: null });
    const b64 = `data:image/png;base64,${'A'.repeat(100_000)}`;
    const image = requestBound('chat.completions', {
      model: 'm',
      n: 3,
      best_of: 5,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: b64 } }] }],
    });
    expect(image.input_tokens).toBeGreaterThanOrEqual(IMAGE_INPUT_TOKENS);
    expect(image.input_tokens).toBeLessThan(IMAGE_INPUT_TOKENS + 1000);
    expect(image.outputs).toBe(5);
    const anthropicImage = requestBound('messages', {
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/a.png' } }] }],
    });
    expect(anthropicImage.input_tokens).toBeGreaterThanOrEqual(IMAGE_INPUT_TOKENS);
  });

  it('names what no bound covers: server-side state, files and documents, server tools', () => {
    expect(requestBound('responses', { input: 'x', previous_response_id: 'r' })).toMatchObject({
      serverState: true,
      unbounded: expect.stringMatching(/previous_response_id/),
    });
    expect(requestBound('responses', { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }).unbounded).toMatch(
      /input_file/,
    );
    expect(requestBound('messages', { messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }).unbounded).toMatch(
      /document/,
    );
    expect(requestBound('responses', { input: 'x', tools: [{ type: 'web_search' }] }).unbounded).toMatch(/web_search/);
    expect(requestBound('messages', { messages: [], tools: [{ type: 'web_fetch_20250910', name: 'f' }] }).unbounded).toMatch(/web_fetch/);
    expect(requestBound('messages', { messages: [], tools: [{ name: 'f', input_schema: {} }] }).unbounded).toBeNull();
    expect(requestBound('chat.completions', { messages: [], tools: [{ type: 'function', function: { name: 'f' } }] }).unbounded).toBeNull();
  });
});

describe('admission', () => {
  const bound = (input: number, outputs = 1, unbounded: string | null = null) => ({
    input_tokens: input,
    outputs,
    unbounded,
    serverState: false,
  });

  it('reserves output per output and lowers the limit to fit; refuses when each output cannot get a token', () => {
    const p = policy({ max_output_tokens: 1000 });
    expect(admit(p, spent({}), 0, bound(10, 10), 500)).toMatchObject({ ok: true, outputCap: 100, reserve: { output_tokens: 1000 } });
    expect(admit(p, spent({ output_tokens: 995 }), 0, bound(10, 10), null)).toMatchObject({ ok: false, kind: 'budget' });
    expect(admit(p, spent({}), 0, bound(10, 4), null)).toMatchObject({ ok: true, outputCap: 250 });
  });

  it('refuses an unbounded input under an input budget unless the scope allows it (then it reserves all that is left)', () => {
    expect(admit(policy({ max_input_tokens: 500 }), spent({}), 0, bound(10, 1, 'x'), null)).toMatchObject({ ok: false, kind: 'unbounded' });
    expect(
      admit(policy({ max_input_tokens: 500, allow_unbounded_input: true }), spent({ input_tokens: 100 }), 0, bound(10, 1, 'x'), null),
    ).toMatchObject({
      ok: true,
      reserve: { input_tokens: 400 },
      warning: expect.stringMatching(/400 input tokens/),
    });
    expect(admit(policy({}), spent({}), 0, bound(10, 1, 'x'), null)).toMatchObject({
      ok: true,
      warning: expect.stringMatching(/no input budget/),
    });
  });

  it('never says a negative number of tokens is left after an overspend', () => {
    const over = spent({ input_tokens: 500_000, output_tokens: 3000 });
    const input = admit(policy({ max_input_tokens: 100_000 }), over, 0, bound(10), null);
    const output = admit(policy({ max_output_tokens: 1000 }), spent({}), 0, bound(10), null);
    const outputOver = admit(policy({ max_output_tokens: 1000 }), over, 0, bound(10), null);
    for (const a of [input, outputOver]) {
      expect(a).toMatchObject({ ok: false, kind: 'budget' });
      expect(JSON.stringify(a)).not.toMatch(/-\d/);
      expect(JSON.stringify(a)).toMatch(/are spent/);
    }
    expect(output.ok).toBe(true);
  });
});

describe('gateway configuration', () => {
  const upstreams = (openai: Record<string, unknown>) => ({
    upstreams: { openai: { base_url: 'https://api.openai.com', key_env: 'K', ...openai } },
  });

  it('refuses a key_env the processes need and a base URL with credentials, naming the field', () => {
    for (const name of ['PATH', 'HOME', 'LD_PRELOAD', 'NODE_OPTIONS', 'HTTPS_PROXY', 'OPENAI_BASE_URL', 'VERO_HOME', 'LC_ALL']) {
      const r = GatewaySpec.safeParse(upstreams({ key_env: name }));
      expect(r.success).toBe(false);
      expect(JSON.stringify(r.error?.issues)).toContain('key_env');
    }
    for (const name of ['OPENAI_API_KEY', 'OPENAI_UPSTREAM_KEY', 'VERO_TEST_ANTHROPIC_KEY'])
      expect(GatewaySpec.safeParse(upstreams({ key_env: name })).success).toBe(true);
    const creds = GatewaySpec.safeParse(upstreams({ base_url: 'https://user:sk-secret@api.openai.com' }));
    expect(creds.success).toBe(false);
    expect(creds.error?.issues[0]).toMatchObject({
      path: ['upstreams', 'openai', 'base_url'],
      message: expect.stringMatching(/credentials/),
    });
    expect(GatewaySpec.safeParse({ ...upstreams({}), candidate_base_url: 'http://a:b@10.0.0.1:8001' }).success).toBe(false);
    // The build config reports it at its path.
    const build = BuildConfigFile.safeParse({ gateway: upstreams({ key_env: 'PATH' }) });
    expect(JSON.stringify(build.error?.issues)).toMatch(/PATH is a variable[^}]*"path":\["gateway","upstreams","openai","key_env"\]/);
  });

  it('gives clients the SDK variables and those of openhands-sdk (LLM_*) and goose (OPENAI_HOST, OPENAI_BASE_PATH)', () => {
    const both = GatewaySpec.parse({
      upstreams: { openai: { base_url: 'https://o', key_env: 'A' }, anthropic: { base_url: 'https://a', key_env: 'B' } },
    }).upstreams;
    expect(clientEnvFor(both, 'tok', 'http://10.213.0.1:8001/task/{task}')).toEqual({
      OPENAI_API_KEY: 'tok',
      OPENAI_BASE_URL: 'http://10.213.0.1:8001/task/{task}/v1',
      ANTHROPIC_API_KEY: 'tok',
      ANTHROPIC_BASE_URL: 'http://10.213.0.1:8001/task/{task}',
      LLM_API_KEY: 'tok',
      LLM_BASE_URL: 'http://10.213.0.1:8001/task/{task}/v1',
      OPENAI_HOST: 'http://10.213.0.1:8001',
      OPENAI_BASE_PATH: 'task/{task}/v1/chat/completions',
    });
    expect(clientEnvFor(both, 'tok', 'http://eval-sidecar:8001')).toMatchObject({
      OPENAI_HOST: 'http://eval-sidecar:8001',
      OPENAI_BASE_PATH: 'v1/chat/completions',
    });
    const anthropicOnly = GatewaySpec.parse({ upstreams: { anthropic: { base_url: 'https://a', key_env: 'B' } } }).upstreams;
    expect(clientEnvFor(anthropicOnly, 'tok', 'http://eval-sidecar:8001')).toEqual({
      ANTHROPIC_API_KEY: 'tok',
      ANTHROPIC_BASE_URL: 'http://eval-sidecar:8001',
      LLM_API_KEY: 'tok',
      LLM_BASE_URL: 'http://eval-sidecar:8001',
    });
  });
});
