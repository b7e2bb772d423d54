/**
 * A real `vero serve` whose build turned harness isolation off and gave task services the upstream
 * (`harness_user: null`, `task_services_use_upstream: true`): the nested harbor gets the real upstream under the
 * OpenAI names and the evaluation's gateway token under VERO_AGENT_INFERENCE_*, calls made with the OpenAI
 * variables bypass the gateway, and finalize records the reward as produced without isolation. Its test target
 * names its own model (vero's `targets[].model`): the verifier's run of it has that `-m`.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GatewaySpec } from '../../model/gateway/policy';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';
import { commitImprovement, finalizeAsVerifier, post, setup, startSidecar } from '../helpers/sidecar';

jest.setTimeout(180_000);
const KEY = 'sk-real-upstream-key-task-services-may-use';
const digest = (v: string) => createHash('sha256').update(v).digest('hex').slice(0, 16);

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  await upstream.close();
});

test('the nested harbor runs with the upstream as OPENAI_*, the gateway as VERO_AGENT_INFERENCE_*; finalize marks the reward unisolated; a target’s own model is its trusted run’s -m', async () => {
  // hello-world's "agent" calls a model with $OPENAI_BASE_URL/$OPENAI_API_KEY, as a task's own service would.
  const s = await setup({ scenario: { tasks: { 'hello-world': { reward: 1, model_call: 'gpt-test' } }, default: { reward: 1 } } });
  s.cfg.gateway = GatewaySpec.parse({
    port: 0,
    upstreams: { openai: { base_url: upstream.url, key_env: 'VERO_TEST_UPSTREAM_KEY' } },
    scopes: { evaluation: { models: ['gpt-test'] }, finalization: { models: ['gpt-test'] } },
  });
  s.cfg.harness_user = null;
  s.cfg.task_services_use_upstream = true;
  // vero's targets[].model: the trusted scoring of this target runs with its own model.
  s.cfg.targets = s.cfg.targets.map((t) => ({ ...t, model: 'gpt-test' }));
  fs.writeFileSync(s.serveFile, JSON.stringify(s.cfg));
  const side = await startSidecar(s, { VERO_TEST_UPSTREAM_KEY: KEY });
  upstream.seen.length = 0;
  try {
    const r = await post(side.url, '/eval', { split: 'train' });
    expect(r.status).toBe(200);
    // The call went straight to the upstream with the key: the gateway neither saw nor metered it.
    expect(upstream.seen).toHaveLength(1);
    expect(upstream.seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(r.json.model_usage ?? { requests: 0 }).toMatchObject({ requests: 0 });
    const starts = fs
      .readFileSync(path.join(s.dir, 'harbor.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; env_names: string[]; api_key_digests: Record<string, string> })
      .filter((l) => l.event === 'start');
    expect(starts.length).toBeGreaterThan(0);
    for (const start of starts) {
      expect(start.api_key_digests.OPENAI_API_KEY).toBe(digest(KEY));
      expect(start.api_key_digests.VERO_AGENT_INFERENCE_API_KEY).toBeDefined();
      expect(start.api_key_digests.VERO_AGENT_INFERENCE_API_KEY).not.toBe(digest(KEY));
      expect(start.env_names).toEqual(expect.arrayContaining(['OPENAI_BASE_URL', 'OPENAI_API_BASE', 'VERO_AGENT_INFERENCE_BASE_URL']));
      expect(start.env_names).not.toContain('OPENAI_HOST');
    }
    // The key itself was never written to the sidecar's files.
    const admin = fs.readdirSync(s.cfg.paths.admin_volume, { recursive: true, encoding: 'utf8' });
    for (const f of admin) {
      const p = path.join(s.cfg.paths.admin_volume, f);
      if (fs.statSync(p).isFile()) expect(fs.readFileSync(p, 'utf8')).not.toContain(KEY);
    }

    // A candidate on the selection split, so finalize grades it on the test target.
    commitImprovement(s.work);
    expect((await post(side.url, '/eval', { split: 'validation' })).status).toBe(200);
    const fin = await finalizeAsVerifier(side, s);
    expect(fin.status).toBe(200);
    const runs = fs
      .readFileSync(path.join(s.dir, 'harbor.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { event: string; argv: string[] })
      .filter((l) => l.event === 'start' && !l.argv.includes('--dry-run'));
    const modelOf = (argv: string[]) => (argv.includes('-m') ? argv[argv.indexOf('-m') + 1] : undefined);
    const task = (argv: string[]) => argv[argv.indexOf('-i') + 1];
    expect(runs.filter((r) => task(r.argv) === 'add-cli-flag').map((r) => modelOf(r.argv))).toEqual(['gpt-test']); // the test target
    expect(runs.filter((r) => task(r.argv) === 'hello-world').map((r) => modelOf(r.argv))).toEqual([undefined]); // the agent's train run
    expect(fin.json.commit).toBeTruthy();
    expect(fin.json.unisolated).toEqual({
      harness_user: null,
      task_services_use_upstream: true,
      exposure: expect.stringContaining("candidate code ran as the sidecar's own user"),
    });
  } finally {
    await side.stop();
  }
});
