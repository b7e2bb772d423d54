/**
 * The gateway inside a real `vero serve`: candidates get an evaluation token (never the key), a token dies with
 * its evaluation, an evaluation whose model budget ran out is invalid rather than a low score, and the
 * verifier's own scope still scores after the agent's is spent.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GatewaySpec } from '../../model/gateway/policy';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';
import { spawnSync } from 'node:child_process';
import * as net from 'node:net';
import { git, modeASetup, post, setup, startSidecar, VERO } from '../helpers/sidecar';
import { uniqueQueue } from '../helpers/temporal';

jest.setTimeout(180_000);
const KEY = 'sk-real-upstream-key-for-the-sidecar-only';

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  await upstream.close();
});

const gatewayPortOf = (log: string) => Number(/gateway on [\d.]+:(\d+)/.exec(log)?.[1]);

/** A Mode A candidate that calls the model once per run and records the environment it was given. */
const CALLING_INFERENCE = (envDump: string) => `
import json as _json, os as _os, urllib.request as _rq
with open(${JSON.stringify(envDump)}, "a") as _f:
    _f.write(_json.dumps(dict(_os.environ)) + "\\n")
try:
    _rq.urlopen(_rq.Request(
        _os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=_json.dumps({"model": "gpt-test", "messages": [{"role": "user", "content": "2+2?"}]}).encode(),
        headers={"authorization": "Bearer " + _os.environ["OPENAI_API_KEY"], "content-type": "application/json"},
    ), timeout=10).read()
except Exception:
    pass  # a refused call: the candidate answers without the model
`;

test('vero serve with its gateway port taken says so and exits with the config error code (no stack)', async () => {
  const { serveFile, hostCfg } = await modeASetup();
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as net.AddressInfo).port;
  try {
    hostCfg.gateway = GatewaySpec.parse({
      port,
      upstreams: { openai: { base_url: upstream.url, key_env: 'VERO_TEST_UPSTREAM_KEY' } },
      scopes: { evaluation: { models: ['gpt-test'] } },
    });
    fs.writeFileSync(serveFile, JSON.stringify({ ...hostCfg, host: '127.0.0.1' }));
    const r = spawnSync(VERO, ['serve', '--config', serveFile], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, VERO_TEST_UPSTREAM_KEY: KEY },
    });
    expect(r.stderr).toContain(`gateway.port: 127.0.0.1:${port} is already in use`);
    expect(r.stderr).not.toMatch(/EADDRINUSE|\n\s+at /);
    expect(r.status).toBe(2);
  } finally {
    await new Promise((r) => taken.close(r));
  }
});

test('mode A: the candidate gets an evaluation token, never the key; a spent budget makes the evaluation invalid; finalize has its own scope', async () => {
  const { dir, serveFile, hostCfg, work } = await modeASetup();
  const envDump = path.join(dir, 'candidate-env.jsonl');
  hostCfg.gateway = GatewaySpec.parse({
    port: 0,
    upstreams: { openai: { base_url: upstream.url, key_env: 'VERO_TEST_UPSTREAM_KEY' } },
    scopes: { evaluation: { models: ['gpt-test'], max_requests: 1 }, finalization: { models: ['gpt-test'], max_requests: 10 } },
  });
  fs.writeFileSync(serveFile, JSON.stringify(hostCfg));
  fs.writeFileSync(path.join(work, 'infer.py'), CALLING_INFERENCE(envDump) + fs.readFileSync(path.join(work, 'infer.py'), 'utf8'));
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', 'ask the model');
  const candidate = git(work, 'rev-parse', 'HEAD');
  upstream.seen.length = 0;

  const side = await startSidecar({ dir, serveFile, cfg: hostCfg, work, queue: uniqueQueue('gw-mode-a') }, { VERO_TEST_UPSTREAM_KEY: KEY });
  try {
    const gateway = `http://127.0.0.1:${gatewayPortOf(side.log())}`;
    const first = await post(side.url, '/eval', { split: 'train' });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({
      commit: candidate,
      status: 'completed',
      mean_score: 1,
      model_usage: { requests: 1, output_tokens: 7 },
    });
    // The upstream saw the key; the candidate saw only its evaluation token and the gateway's URL.
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const env = JSON.parse(fs.readFileSync(envDump, 'utf8').split('\n')[0]!) as Record<string, string>;
    expect(env.OPENAI_API_KEY).toMatch(/^vero-evaluation-/);
    expect(env.OPENAI_BASE_URL).toBe(`${gateway}/task/inference-train/v1`); // the gateway meters per task
    expect(JSON.stringify(env)).not.toContain(KEY);
    // The token died with its evaluation.
    const late = await fetch(`${gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.OPENAI_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [] }),
    });
    expect(late.status).toBe(401);

    // The evaluation scope's one request is spent: the next evaluation is invalid, not a 0.
    const second = await post(side.url, '/eval', { split: 'validation' });
    expect(second.status).toBe(200);
    expect(second.json.status).toBe('invalid');
    expect(String(second.json.invalid_reason)).toMatch(/refused 1 model call.*evaluation budget is spent/);
    const status = (await (await fetch(`${side.url}/status`)).json()) as {
      gateway: { scopes: Record<string, { usage: { requests: number; refused_budget: number } }> };
    };
    expect(status.gateway.scopes.evaluation!.usage).toMatchObject({ requests: 1, refused_budget: 1 });
    expect(upstream.seen).toHaveLength(1);

    // The verifier scores on its own scope: the reward is not lost to the agent's spent budget.
    const token = fs.readFileSync(hostCfg.paths.token_path, 'utf8');
    const fin = await post(side.url, '/finalize', {}, { authorization: `Bearer ${token}` });
    expect(fin.status).toBe(200);
    expect(fin.json.commit).toBe(candidate);
    expect(String(fin.json.reason)).not.toMatch(/auto_best chose/); // the invalid validation run was not shortlisted
    expect(upstream.seen.length).toBeGreaterThan(1);
    expect(upstream.seen.every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    const after = (await (await fetch(`${side.url}/status`)).json()) as typeof status;
    expect(after.gateway.scopes.finalization!.usage.requests).toBe(upstream.seen.length - 1);
    expect(after.gateway.scopes.finalization!.usage.refused_budget).toBe(0);
  } finally {
    await side.stop();
  }
});

test('mode B: the nested harbor gets an evaluation token as OPENAI_API_KEY even when the key has that name, and no key; usage per task', async () => {
  // hello-world's agent calls a model (the stand-in as a model-using agent); the other tasks do not.
  const s = await setup({ scenario: { tasks: { 'hello-world': { reward: 1, model_call: 'gpt-test' } }, default: { reward: 1 } } });
  s.cfg.gateway = GatewaySpec.parse({
    port: 0,
    upstreams: { openai: { base_url: upstream.url, key_env: 'OPENAI_API_KEY' } },
    scopes: { evaluation: { models: ['gpt-test'] } },
  });
  fs.writeFileSync(s.serveFile, JSON.stringify(s.cfg));
  const side = await startSidecar(s, { OPENAI_API_KEY: KEY });
  upstream.seen.length = 0;
  try {
    const r = await post(side.url, '/eval', { split: 'train' });
    expect(r.status).toBe(200);
    expect(r.json.model_usage).toMatchObject({ requests: 1 });
    // train is viewable: its per-task rows carry their model usage.
    const dir = String(r.json.result_path);
    const byName = Object.fromEntries(
      fs
        .readdirSync(dir)
        .filter((f) => /^\d+\.json$/.test(f))
        .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { name: string; model_usage?: { requests: number } })
        .map((x) => [x.name, x]),
    );
    expect(byName['hello-world']!.model_usage).toMatchObject({ requests: 1, output_tokens: 5 });
    expect(byName['count-words']!.model_usage).toBeUndefined();
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    const starts = fs
      .readFileSync(path.join(s.dir, 'harbor.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; env_names: string[]; api_key_digests: Record<string, string> })
      .filter((l) => l.event === 'start');
    expect(starts.length).toBeGreaterThan(0);
    const keyDigest = createHash('sha256').update(KEY).digest('hex').slice(0, 16);
    for (const start of starts) {
      expect(start.env_names).toEqual(expect.arrayContaining(['OPENAI_API_KEY', 'OPENAI_BASE_URL']));
      expect(start.api_key_digests.OPENAI_API_KEY).toBeDefined();
      expect(start.api_key_digests.OPENAI_API_KEY).not.toBe(keyDigest);
    }
    // The evaluation's token is gone from the admin side once it ended.
    expect(fs.readdirSync(path.join(s.cfg.paths.admin_volume, 'gateway', 'env')).sort()).toEqual(['finalization.json']);
  } finally {
    await side.stop();
  }
});
