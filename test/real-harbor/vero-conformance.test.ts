/**
 * vero's examples/harness-conformance, compiled from vero's own build.yaml (test/fixtures/vero, unchanged) with
 * `--param inner_env=docker`, run as its user runs it: real `harbor run -p <task> -e docker` (Harbor 0.25 outside,
 * the build's Harbor 0.26 in the sidecar, real Docker) with Harbor's oracle. The oracle commits a no-op candidate
 * and evaluates the selection split; the verifier (finalize) scores that candidate on the `test` targets through a
 * nested `harbor run` per case in the sidecar's own Docker engine. vero's seed target agent answers through the
 * task's inference gateway (evaluation scope; the fake upstream stands in for the provider and answers "Compute
 * A + B" with the sum) and gives up on multiplication, so the reward is the share of addition cases in `test`.
 *
 * This machine's adaptation (no image registry): the build's FROM lines name `debian:trixie-slim` (vero-harbor's
 * default base image, for a vero file that sets none) and the inner tasks' `python:3.12-slim`. For the run, the
 * test gives the local engine those names as tags of the offline images scripts/ensure-docker makes
 * (vero-base:trixie-dind holds what the compiled Dockerfiles would install with apt; vero-base:bookworm, the
 * smallest, has the python3 vero's verifier runs), and removes them afterwards. A name the engine already holds is used as it is
 * and left alone. The build saves the inner base image into the task and the sidecar's engine loads it
 * (compiler/nested-docker.ts).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildTaskDir } from '../../compiler/compile';
import { runCompiledTask } from '../../harbor/compiled-task-run';
import { ROOT, tempDir } from '../helpers/fixtures';
import { dockerObjects, harborBin, describeOrFail, realHarborUnavailable } from '../helpers/real-harbor';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';

const IMAGES = ['vero-base:bookworm', 'vero-base:trixie-dind'];
const unavailable =
  realHarborUnavailable() ??
  (IMAGES.every((i) => dockerObjects().includes(`image ${i}`)) ? null : `the task base images ${IMAGES.join(', ')} are missing`);
const realDescribe = describeOrFail(unavailable);

jest.setTimeout(20 * 60_000);

const EXAMPLE = path.join(ROOT, 'test/fixtures/vero/examples/harness-conformance');
/** The names the build's FROM lines use, as tags of the offline images (see above). */
const REGISTRY_STAND_INS: Record<string, string> = {
  'debian:trixie-slim': 'vero-base:trixie-dind',
  'python:3.12-slim': 'vero-base:bookworm',
};
/** The provider key, held by the task's gateway only. */
const UPSTREAM_KEY = 'sk-vero-conformance-upstream-key';
/** The secrets vero's file declares (Modal, W&B): unused with inner_env=docker and W&B disabled, but required set. */
const DECLARED_SECRETS = ['MODAL_TOKEN_ID', 'MODAL_TOKEN_SECRET', 'WANDB_API_KEY', 'WANDB_BASE_URL'];

const taskInstruction = (name: string) => fs.readFileSync(path.join(EXAMPLE, 'tasks', name, 'instruction.md'), 'utf8');
const partition = (name: string) => JSON.parse(fs.readFileSync(path.join(EXAMPLE, 'partitions', `${name}.json`), 'utf8')) as string[];
/** The seed's known outcome on a partition: it answers the addition cases (1) and abandons the multiplication ones (0). */
const seedScore = (name: string) =>
  partition(name).filter((t) => /Compute \d+ \+ \d+/.test(taskInstruction(t))).length / partition(name).length;

realDescribe('vero’s harness-conformance on real Harbor 0.25 and Docker', () => {
  const before = unavailable ? [] : dockerObjects();
  const tagged: string[] = [];
  let upstream: FakeUpstream;
  let dir = '';

  beforeAll(async () => {
    for (const [name, image] of Object.entries(REGISTRY_STAND_INS))
      if (!before.includes(`image ${name}`)) {
        execFileSync('docker', ['tag', image, name]);
        tagged.push(name);
      }
    upstream = await startFakeUpstream('0.0.0.0');
    dir = tempDir('vero-conformance-');
    fs.cpSync(EXAMPLE, path.join(dir, 'example'), { recursive: true });
    const git = (...a: string[]) =>
      execFileSync('git', ['-C', path.join(dir, 'example', 'target'), '-c', 'user.name=t', '-c', 'user.email=t@t', ...a]);
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'seed');
  });
  afterAll(async () => {
    await upstream?.close();
    for (const name of tagged) execFileSync('docker', ['image', 'rm', name], { stdio: 'ignore' });
    // Harbor removes the trial's containers, networks, volumes and built images; the tags are gone: nothing is left.
    if (!unavailable) expect(dockerObjects()).toEqual(before);
  });

  test('the oracle: the reward is the seed’s known score on `test`, computed on the trusted side from nested Docker trials whose model calls reached the upstream with its key only', async () => {
    expect(seedScore('test')).toBe(0.5);
    const taskDir = path.join(dir, 'task');
    // vero's file takes the upstream's URL from OPENAI_BASE_URL at build time: the fake upstream on the Docker host.
    const saved = process.env.OPENAI_BASE_URL;
    process.env.OPENAI_BASE_URL = `http://host.docker.internal:${new URL(upstream.url).port}/v1`;
    try {
      const r = await buildTaskDir(path.join(dir, 'example', 'build.yaml'), taskDir, {
        skipSecretCheck: true,
        linkRuntime: true,
        params: { inner_env: 'docker' },
      });
      expect(r.warnings).toContain(
        "nested Docker: the inner tasks' base image(s) python:3.12-slim are saved from this host's engine and loaded into the sidecar's",
      );
    } finally {
      if (saved === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved;
    }

    const o = await runCompiledTask({
      harbor: harborBin(),
      taskDir,
      jobsDir: path.join(dir, 'jobs'),
      jobName: 'oracle',
      agent: { kind: 'oracle' },
      env: { OPENAI_API_KEY: UPSTREAM_KEY, ...Object.fromEntries(DECLARED_SECRETS.map((s) => [s, `unused-offline-${s}`])) },
    });
    expect({ exitCode: o.exitCode, exception: o.exception, reward: o.reward }).toEqual({
      exitCode: 0,
      exception: null,
      reward: { reward: seedScore('test') },
    });
    // The oracle's solve.sh committed a no-op candidate and evaluated it on the selection split; finalize scored it.
    expect(o.finalize!.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(o.finalize!.candidates!.map((c) => [c.split, c.commit, c.mean_score])).toEqual([
      ['validation', o.finalize!.commit, seedScore('validation')],
    ]);
    expect(o.finalize!.reason).toBe('submitted candidate'); // vero's reward_mode: submit
    expect(o.finalize!.rewards).toEqual({ reward: seedScore('test') });

    // The seed asked the model for each addition case it was given (its multiplication cases never call it), through
    // the gateway: the upstream saw the provider key only, never a gateway token.
    const asked = new Set(
      upstream.seen.map((s) => {
        const msgs = s.body.messages as { role: string; content: string }[];
        return msgs[msgs.length - 1]!.content;
      }),
    );
    const additions = [...partition('validation'), ...partition('test')].map(taskInstruction).filter((t) => t.includes(' + '));
    expect([...asked].sort()).toEqual(additions.sort());
    expect(upstream.seen.every((s) => s.path === '/v1/chat/completions')).toBe(true);
    expect(upstream.seen.map((s) => s.headers.authorization)).toEqual(upstream.seen.map(() => `Bearer ${UPSTREAM_KEY}`));
  });
});
