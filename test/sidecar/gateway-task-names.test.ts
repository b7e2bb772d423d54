/**
 * Every task name vero scores routes through the gateway, end to end through `vero serve`: a Mode B evaluation
 * whose tasks have names Harbor accepts as task dirs — spaces, non-ASCII, brackets, `+`, `$`, a leading `-`, more
 * than 100 characters — makes each task's model call through its own `/task/<name>` base URL, answered 200 and
 * metered under that task. (A refused call makes the evaluation invalid: gateway-sidecar.test.ts.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GatewaySpec } from '../../model/gateway/policy';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';
import { DATASET, tempDir } from '../helpers/fixtures';
import { post, setup, startSidecar } from '../helpers/sidecar';

jest.setTimeout(180_000);

const ODD = ['my task', 'naïve-äöü', 'x[1]+y$z', '-leading-dash', `long-${'n'.repeat(120)}`];
const PLAIN = ['add-cli-flag'];

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  await upstream.close();
});

/** mini-bench with its tasks' dirs renamed to the odd names (the first five) and one plain task kept. */
function oddDataset(): string {
  const dir = path.join(tempDir('vero-odd-names-'), 'bench');
  const sources = fs.readdirSync(DATASET).filter((n) => !PLAIN.includes(n));
  fs.mkdirSync(dir);
  ODD.forEach((name, i) => fs.cpSync(path.join(DATASET, sources[i]!), path.join(dir, name), { recursive: true }));
  for (const p of PLAIN) fs.cpSync(path.join(DATASET, p), path.join(dir, p), { recursive: true });
  return dir;
}

test('tasks with odd names each call the model through their own base URL: 200 and metered per task', async () => {
  const dataset = oddDataset();
  const model = { reward: 1, model_call: 'gpt-test' };
  const s = await setup({
    scenario: { tasks: Object.fromEntries([...ODD, ...PLAIN].map((n) => [n, model])), default: { reward: 0 } },
    build: {
      inner_task: dataset,
      partition: { train: [...ODD], validation: PLAIN, test: PLAIN },
      budgets: [{ split: 'train', total_run_budget: 2 }],
    },
  });
  s.cfg.mode_b = { ...s.cfg.mode_b!, task_source: { path: dataset } };
  s.cfg.gateway = GatewaySpec.parse({
    port: 0,
    upstreams: { openai: { base_url: upstream.url, key_env: 'VERO_TEST_UPSTREAM_KEY' } },
    scopes: { evaluation: { models: ['gpt-test'] } },
  });
  fs.writeFileSync(s.serveFile, JSON.stringify(s.cfg));
  const side = await startSidecar(s, { VERO_TEST_UPSTREAM_KEY: 'sk-upstream-key' });
  upstream.seen.length = 0;
  try {
    const r = await post(side.url, '/eval', { split: 'train' });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: 'completed', n_samples: ODD.length, n_errors: 0, mean_score: 1 });
    expect(r.json.model_usage).toMatchObject({ requests: ODD.length, refused_budget: 0 });
    expect(upstream.seen).toHaveLength(ODD.length);
    // Each task's row carries its own usage: the call was metered under its name, not refused and not pooled.
    const dir = String(r.json.result_path);
    const rows = fs
      .readdirSync(dir)
      .filter((f) => /^\d+\.json$/.test(f))
      .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { name: string; model_usage?: { requests: number } });
    expect(Object.fromEntries(rows.map((x) => [x.name, x.model_usage?.requests]))).toEqual(Object.fromEntries(ODD.map((n) => [n, 1])));
  } finally {
    await side.stop();
  }
});
