/**
 * What the optimizer learns of a case beyond its score, in a real `vero serve` over the Harbor stand-in: a failed
 * case of a viewable split carries the tail of the evaluated agent's transcript, capped and with every secret the
 * sidecar and its gateway hold redacted, and its trials' detail; a solved case no transcript; aggregate-only and
 * hidden splits nothing at all. The tasks of a split that exposes its case resources, and only those, are there to read.
 * On the trusted side, the gateway's request log names each call's evaluation, task and conversation.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GatewaySpec } from '../../model/gateway/policy';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';
import { DATASET, taskOf } from '../helpers/fixtures';
import {
  commitImprovement,
  finalizeAsVerifier,
  harborStarts,
  listFiles,
  post,
  setup,
  startSidecar,
  type Setup,
  type Sidecar,
} from '../helpers/sidecar';

jest.setTimeout(180_000);

const KEY = 'sk-upstream-key-held-by-the-gateway-only';
const SECRET = 'declared-secret-of-the-nested-run';
const MAX_BYTES = 2000;

/** A transcript much longer than the cap, that logs the agent's gateway token, a declared secret and the upstream key. */
const transcript = (marker: string) =>
  JSON.stringify({
    steps: [
      { source: 'user', message: `${marker}-START` },
      { source: 'agent', message: 'x'.repeat(6000) },
      { source: 'agent', message: `env: OPENAI_API_KEY=\${OPENAI_API_KEY} VERO_TEST_SECRET=\${VERO_TEST_SECRET} echoed=${KEY}` },
      { source: 'agent', message: `${marker}-END é` },
    ],
  });

let upstream: FakeUpstream;
let s: Setup;
let side: Sidecar;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  s = await setup({
    scenario: {
      tasks: {
        'hello-world': { reward: 0, transcript: transcript('TRAIN-FAILED'), model_call: 'gpt-test' },
        'count-words': { reward: 1, transcript: transcript('TRAIN-SOLVED'), model_call: 'gpt-test' },
        'reverse-string': { exception: 'NonZeroAgentExitCodeError', reward_file: 'missing', transcript: transcript('TRAIN-DEAD') },
        'sum-numbers': { reward: 0, transcript: transcript('VALIDATION') },
        'fix-csv-parser': { reward: 0, transcript: transcript('VALIDATION') },
        'add-cli-flag': { reward: 0, transcript: transcript('HELD-OUT') },
      },
    },
    secrets: ['VERO_TEST_SECRET'],
    build: {
      feedback: { transcripts: true, max_bytes: MAX_BYTES, attempt_detail: true },
      splits: [
        { split: 'train', access: 'viewable', expose_case_resources: true },
        { split: 'validation', access: 'non_viewable' },
        { split: 'test', access: 'no_access' },
      ],
    },
  });
  s.cfg.gateway = GatewaySpec.parse({
    port: 0,
    upstreams: { openai: { base_url: upstream.url, key_env: 'VERO_TEST_UPSTREAM_KEY' } },
    scopes: { evaluation: { models: ['gpt-test'] }, finalization: { models: ['gpt-test'] } },
    request_log: { attribution: true },
  });
  fs.writeFileSync(s.serveFile, JSON.stringify(s.cfg));
  side = await startSidecar(s, { VERO_TEST_UPSTREAM_KEY: KEY, VERO_TEST_SECRET: SECRET });
});
afterAll(async () => {
  await side?.stop();
  await upstream?.close();
});

interface CaseFile {
  name: string;
  score: number | null;
  feedback?: string;
  attempts?: { trial: string; reward: number | null; exception: string | null }[];
}

const casesIn = (dir: string): Record<string, CaseFile> =>
  Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((f) => /^\d+\.json$/.test(f))
      .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as CaseFile)
      .map((c) => [c.name, c]),
  );

/** Everything the optimizer can read: the agent volume's files. */
const agentVisible = () =>
  listFiles(s.cfg.paths.agent_volume)
    .map((f) => path.join(s.cfg.paths.agent_volume, f))
    .filter((f) => fs.statSync(f).isFile())
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');

test('a viewable split: a failed case gets its transcript’s tail, capped and redacted; a solved one none; every case its trials', async () => {
  const r = await post(side.url, '/eval', { split: 'train' });
  expect(r.status).toBe(200);
  const cases = casesIn(String(r.json.result_path));

  const failed = cases['hello-world']!;
  expect(failed.score).toBe(0);
  const text = failed.feedback!;
  expect(text.endsWith('TRAIN-FAILED-END é"}]}')).toBe(true); // the tail: where the agent ended up
  expect(text).not.toContain('TRAIN-FAILED-START');
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_BYTES);
  expect(Buffer.byteLength(text)).toBeGreaterThan(MAX_BYTES - 20);
  expect(text).toContain('OPENAI_API_KEY=[REDACTED] VERO_TEST_SECRET=[REDACTED] echoed=[REDACTED]');
  expect(text).not.toMatch(/vero-evaluation-/);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(KEY);
  expect(failed.attempts).toEqual([{ trial: expect.stringMatching(/^hello-world__/), reward: 0, exception: null }]);

  // A dead case (no reward) is a failure too: its transcript, and the exception that ended its trial.
  expect(cases['reverse-string']!.feedback).toMatch(/TRAIN-DEAD-END é"\}\]\}$/);
  expect(cases['reverse-string']!.attempts).toEqual([
    { trial: expect.stringMatching(/^reverse-string__/), reward: null, exception: 'NonZeroAgentExitCodeError' },
  ]);

  const solved = cases['count-words']!;
  expect(solved.score).toBe(1);
  expect(solved.feedback).toBeUndefined();
  expect(solved.attempts).toEqual([{ trial: expect.stringMatching(/^count-words__/), reward: 1, exception: null }]);

  // Nothing of any secret anywhere the optimizer reads, nor in the answer it got.
  for (const leak of [SECRET, KEY]) {
    expect(agentVisible()).not.toContain(leak);
    expect(JSON.stringify(r.json)).not.toContain(leak);
  }
  expect(agentVisible()).not.toMatch(/vero-evaluation-[A-Za-z0-9_-]{43}/);
});

test('an aggregate-only split and the held-out target: no transcript reaches the optimizer', async () => {
  const candidate = commitImprovement(s.work); // a candidate, so that finalize scores the held-out target
  const r = await post(side.url, '/eval', { split: 'validation' });
  expect(r.status).toBe(200);
  expect(r.json.commit).toBe(candidate);
  expect(fs.readdirSync(String(r.json.result_path))).toEqual(['summary.json']);
  expect(JSON.stringify(r.json)).not.toContain('VALIDATION');
  expect((await post(side.url, '/eval', { split: 'test' })).status).toBe(400);
  const fin = await finalizeAsVerifier(side, s);
  expect(fin.status).toBe(200);
  expect(fin.json.commit).toBe(candidate);
  // The held-out task really ran (the verifier's evaluations), and its transcript went nowhere the optimizer reads.
  expect(harborStarts(s).some((i) => taskOf(i) === 'add-cli-flag')).toBe(true);
  expect(JSON.stringify(fin.json)).not.toContain('HELD-OUT');
  const visible = agentVisible();
  expect(visible).not.toContain('VALIDATION');
  expect(visible).not.toContain('HELD-OUT');
  expect(visible).toContain('TRAIN-FAILED-END');
});

test('case resources: the exposed split’s whole task dirs, indexed, where the optimizer reads; no other split’s', () => {
  const root = path.join(s.cfg.paths.agent_volume, 'tasks');
  const read = (rel: string) => JSON.parse(fs.readFileSync(path.join(root, rel), 'utf8')) as unknown;
  expect(read('index.json')).toEqual({ schema_version: 1, splits: [{ split: 'train', path: 'train', cases: 3 }] });
  expect(read('train/index.json')).toEqual({
    schema_version: 1,
    split: 'train',
    cases: ['hello-world', 'count-words', 'reverse-string'].map((t, i) => ({ case_id: i, task_name: t, path: `tasks/${t}` })),
    dataset_files_path: null,
  });
  for (const f of ['instruction.md', 'task.toml', 'tests/test.sh', 'solution/solve.sh', 'environment/Dockerfile'])
    expect(fs.readFileSync(path.join(root, 'train/tasks/hello-world', f), 'utf8')).toBe(
      fs.readFileSync(path.join(DATASET, 'hello-world', f), 'utf8'),
    );
  expect(fs.readdirSync(root).sort()).toEqual(['index.json', 'train']);
  expect(fs.readdirSync(path.join(root, 'train/tasks')).sort()).toEqual(['count-words', 'hello-world', 'reverse-string']);
  for (const hidden of ['sum-numbers', 'fix-csv-parser', 'add-cli-flag']) expect(listFiles(root).join('\n')).not.toContain(hidden);
});

test('request log attribution: each line names its evaluation’s token, its task and its conversation; a response chain keeps one', async () => {
  interface Line {
    token: string;
    endpoint: string;
    task?: string;
    thread_id?: string;
    thread_root_digest?: string;
    root_snippet?: string;
  }
  const logFile = path.join(s.cfg.paths.admin_volume, 'gateway', 'requests.jsonl');
  const lines = () =>
    fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
  // The train evaluation's two model-calling tasks: one evaluation token, each task its own conversation.
  const byTask = (task: string) => lines().filter((l) => l.task === task && l.token.startsWith('eval-'));
  const [hello, count] = [byTask('hello-world'), byTask('count-words')];
  expect(hello).toHaveLength(1);
  expect(count).toHaveLength(1);
  const digest = createHash('sha256').update('solvethetask').digest('hex');
  for (const l of [...hello, ...count])
    expect(l).toMatchObject({
      thread_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      thread_root_digest: digest,
      root_snippet: 'solve the task',
    });
  expect(hello[0]!.token).toBe(count[0]!.token);
  expect(hello[0]!.thread_id).not.toBe(count[0]!.thread_id);

  // A Responses API conversation chained by previous_response_id stays one thread; a new first message is another.
  const gateway = `http://127.0.0.1:${/gateway on [\d.]+:(\d+)/.exec(side.log())![1]}`;
  const env = JSON.parse(fs.readFileSync(path.join(s.cfg.paths.admin_volume, 'gateway', 'env', 'finalization.json'), 'utf8')) as Record<
    string,
    string
  >;
  const call = async (body: Record<string, unknown>) => {
    const r = await fetch(`${gateway}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.OPENAI_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', ...body }),
    });
    expect(r.status).toBe(200);
    return (await r.json()) as { id: string };
  };
  const first = await call({ input: [{ role: 'user', content: 'First question?' }] });
  await call({ previous_response_id: first.id, input: 'And a follow-up.' });
  await call({ input: [{ role: 'user', content: 'Another conversation.' }] });
  const direct = lines().filter((l) => l.endpoint === 'responses');
  expect(direct).toHaveLength(3);
  expect(direct[1]!.thread_id).toBe(direct[0]!.thread_id);
  expect(direct[1]!.thread_root_digest).toBeUndefined();
  expect(direct[2]!.thread_id).not.toBe(direct[0]!.thread_id);
  expect(direct[0]!.root_snippet).toBe('First question?');
});
