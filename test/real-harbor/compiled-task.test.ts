/**
 * The compiler's output as its user runs it: `vero build` on the shipped examples, then real `harbor run -p
 * <task> -e docker` (Harbor 0.25 outside; the Mode B sidecar runs its build's default Harbor 0.26 inside; real Docker,
 * offline base images), with Harbor's oracle (the baseline's
 * reward) and with the example optimizer, a model-free Harbor agent that commits the example's improvement and
 * spends eval budget from inside `main`. Mode A scores with the trusted scorer; Mode B runs the nested harbor
 * in the sidecar's own Docker engine. The optimizer also probes the trust boundary as the `agent` user.
 * Both builds stop the optimizer's evaluations early against the incumbent (`eval_early_stop`): Mode A's optimizer
 * also evaluates the seed on the viewable split after its candidate, which stops early there; Mode B reports to an
 * offline W&B run, which the trial rescues (artifacts/vero-wandb) and W&B's own reader reads back.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildTaskDir } from '../../compiler/compile';
import { EXAMPLE_OPTIMIZER, runCompiledTask, type CompiledTaskOutcome } from '../../harbor/compiled-task-run';
import { agentRepo, ROOT, tempDir } from '../helpers/fixtures';
import { dockerObjects, harborBin, describeOrFail, realHarborUnavailable } from '../helpers/real-harbor';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream';
import { Meter } from '../../sidecar/gateway/meter';
import { resumeLaunch } from '../../sidecar/resume-session';
import type { EvalRecord } from '../../sidecar/registry';
import { WANDB_ARTIFACT } from '../../model/compiled-task/wandb-spec';
import { readRun, wandbPython } from '../helpers/wandb';

const IMAGES = ['vero-base:trixie', 'vero-base:trixie-dind'];
const unavailable =
  realHarborUnavailable() ??
  (IMAGES.every((i) => dockerObjects().includes(`image ${i}`)) ? null : `the task base images ${IMAGES.join(', ')} are missing`);
const realDescribe = describeOrFail(unavailable);

jest.setTimeout(20 * 60_000);

const SECRET = 'sk-vero-probe-secret-value';
/** Mode A's model key, held by its inference gateway (a fake upstream on this host stands in for the provider). */
const UPSTREAM_KEY = 'sk-vero-upstream-key-for-the-gateway-only';

/** Early stop against the incumbent, at the documented defaults, in both builds. */
const EARLY_STOP = 'eval_early_stop: { confidence: 0.95, margin: 0 }';
/** Mode A's train split grown to this many cases, half of them `*` (which the seed gets wrong). */
const MODE_A_TRAIN_CASES = 32;

/**
 * Mode A's train split grown to MODE_A_TRAIN_CASES cases, alternately `+` and `*`: the improvement answers all, the
 * seed half. Paired with the improvement, the seed's evaluation stops early whatever its seeded order (with every
 * `*` case last it stops after 24, model/race/early-stop.ts's sequence at 0.95 and margin 0).
 */
function growModeATrain(dir: string): void {
  const file = path.join(dir, 'mode-a', 'dataset', 'train.jsonl');
  const rows = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  for (let id = rows.length; id < MODE_A_TRAIN_CASES; id++) {
    const [a, b] = [id + 2, (id % 7) + 2];
    const [question, answer] = id % 2 ? [`${a}*${b}`, a * b] : [`${a}+${b}`, a + b];
    rows.push(JSON.stringify({ id, inputs: { question }, labels: { answer: String(answer) } }));
  }
  fs.writeFileSync(file, `${rows.join('\n')}\n`);
}

/**
 * The examples as shipped, next to a fresh example agent repo, with early stop; Mode B also declares a secret to
 * probe for and reports to an offline W&B run, and Mode A gets an inference gateway in front of the fake upstream at
 * `upstreamPort` on the Docker host and a larger train split.
 */
function examples(upstreamPort: number): string {
  const dir = tempDir('vero-compiled-');
  fs.cpSync(path.join(ROOT, 'examples'), dir, { recursive: true, filter: (s) => !s.includes(`${path.sep}agent-repo`) });
  agentRepo(dir);
  const b = path.join(dir, 'mode-b', 'build.yaml');
  fs.writeFileSync(b, fs.readFileSync(b, 'utf8').replace(/^secrets: \[\].*$/m, 'secrets: [VERO_PROBE_SECRET]'));
  fs.appendFileSync(b, [EARLY_STOP, 'wandb: { project: vero-compiled-task, mode: offline }', ''].join('\n'));
  const a = path.join(dir, 'mode-a', 'build.yaml');
  fs.appendFileSync(
    a,
    [
      EARLY_STOP,
      'gateway:',
      `  upstreams: { openai: { base_url: "http://host.docker.internal:${upstreamPort}", key_env: VERO_TEST_UPSTREAM_KEY } }`,
      '  scopes: { producer: { models: [gpt-test], max_requests: 5 }, evaluation: { models: [gpt-test] } }',
      '',
    ].join('\n'),
  );
  growModeATrain(dir);
  return dir;
}

/**
 * The trial's offline W&B run (Mode B), as W&B's reader reads it: one history row per evaluation of the optimizer's
 * that the sidecar had answered when Harbor collected it (before the verifier), each with that evaluation's record's
 * split, commit and score; neither it nor any file beside it holds the secret.
 */
function expectWandbRun(o: CompiledTaskOutcome): void {
  const dir = path.join(o.trialDir!, 'artifacts', WANDB_ARTIFACT);
  const run = readRun(wandbPython(), dir);
  expect(run.run).toMatchObject({ project: 'vero-compiled-task' });
  const agentRecords = o.finalize!.candidates!.filter((c) => !c.admin);
  const rows = run.history.filter((r) => r.evaluation_id !== undefined);
  expect(rows.map((r) => [r.partition, r.principal, r.candidate, r[`${String(r.partition)}/agent/score`]])).toEqual(
    agentRecords.map((c) => [c.split, 'agent', c.commit, c.mean_score]),
  );
  for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => path.join(dir, f))) {
    expect(fs.lstatSync(f).isSymbolicLink()).toBe(false);
    if (fs.statSync(f).isFile()) expect(fs.readFileSync(f, 'utf8')).not.toContain(SECRET);
  }
}

/**
 * The seed's evaluation on the grown train split, paired with the candidate's (its incumbent there): stopped
 * before its last case, with where and why in its record; returns how many unrun cases it says were refunded.
 */
function expectStoppedEarly(r: EvalRecord, candidate: string, seed: string): number {
  const v = r.early_stop!;
  expect(seed).not.toBe(candidate);
  expect(v).toMatchObject({ stopped: true, incumbent: candidate, n_cases_asked: MODE_A_TRAIN_CASES, confidence: 0.95, margin: 0 });
  expect(v.stopped_at).toBeGreaterThanOrEqual(1);
  expect(v.n_cases_run).toBeGreaterThanOrEqual(v.stopped_at!);
  expect(v.n_cases_run + v.n_cases_refunded).toBe(MODE_A_TRAIN_CASES);
  expect(v.n_cases_refunded).toBeGreaterThan(0);
  expect(v.upper).toBeLessThan(0);
  expect(v.why).toMatch(
    new RegExp(
      `^stopped after ${v.stopped_at} of ${MODE_A_TRAIN_CASES} case\\(s\\): .* below the margin 0 \\(against ${candidate.slice(0, 12)}\\); ${v.n_cases_refunded} unrun case\\(s\\) refunded$`,
    ),
  );
  // Its record's score is over the cases that ran: the seed answers the `+` ones.
  expect(r.n_samples).toBe(v.n_cases_run);
  expect(r.mean_score).toBeLessThan(1);
  return v.n_cases_refunded;
}

/** An evaluation that ran every case: its record says so, and why (the first evaluation of a split has no incumbent). */
function expectRanEveryCase(r: EvalRecord): void {
  expect(r.early_stop).toMatchObject({ stopped: false, n_cases_refunded: 0, incumbent: null });
  expect(r.early_stop!.n_cases_run).toBe(r.early_stop!.n_cases_asked);
  expect(r.early_stop!.why).toMatch(/^ran every case: no incumbent/);
}

/** Mode A's target: the share of test questions the baseline answers (it knows `+` only; `improved` adds `*`). */
function modeABaselineAccuracy(): number {
  const rows = fs
    .readFileSync(path.join(ROOT, 'examples/mode-a/dataset/test.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { inputs: { question: string } });
  return rows.filter((r) => r.inputs.question.includes('+')).length / rows.length;
}

interface Case {
  mode: 'mode-a' | 'mode-b';
  key: string;
  baseline: number;
  optimized: number;
}
const CASES: Case[] = [
  { mode: 'mode-a', key: 'accuracy', baseline: modeABaselineAccuracy(), optimized: 1 },
  // test = hello-world (both solve it) + sum-numbers (only `improved` does), as the real-Harbor tier scores them.
  { mode: 'mode-b', key: 'reward', baseline: 0.5, optimized: 1 },
];

/** The optimizer's evaluations as finalize's record lists them (the sidecar's registry). */
const records = (o: CompiledTaskOutcome): EvalRecord[] => o.finalize!.candidates! as EvalRecord[];

function probes(o: CompiledTaskOutcome): Record<string, { exit: number; leaked: boolean }> {
  return JSON.parse(fs.readFileSync(path.join(o.agentLogs, 'trust-probes.json'), 'utf8')) as Record<
    string,
    { exit: number; leaked: boolean }
  >;
}

/**
 * What the example optimizer's run shows: `rewarded` is the trial whose verifier scored its candidate, `acted` the
 * trial it acted in (the same trial unless it was relaunched from the session of the one it died in).
 */
function expectOptimizerOutcome(
  { mode, key, baseline, optimized }: Case,
  acted: CompiledTaskOutcome,
  rewarded: CompiledTaskOutcome,
  upstream: FakeUpstream,
): void {
  expect({ exitCode: rewarded.exitCode, exception: rewarded.exception, reward: rewarded.reward }).toEqual({
    exitCode: 0,
    exception: null,
    reward: { [key]: optimized },
  });
  expect(optimized).toBeGreaterThan(baseline);
  // It spent budget on the viewable split, then the selection split; the sidecar rewarded that candidate (an
  // evaluation of the seed that stopped early is not a candidate's).
  const evals = records(rewarded).filter((c) => !c.early_stop?.stopped);
  expect(evals.map((c) => c.split)).toEqual(['train', 'validation']);
  for (const r of evals) expectRanEveryCase(r);
  expect(new Set(evals.map((c) => c.commit))).toEqual(new Set([rewarded.finalize!.commit]));
  expect(rewarded.finalize!.reason).toBe('best of 1 re-scored candidate(s) on "validation"');
  // It read the viewable split's per-case results where `vero eval --json` said they are (resultPath).
  const steps = JSON.parse(fs.readFileSync(path.join(acted.agentLogs, 'optimizer.json'), 'utf8')) as { command: string; exit: number }[];
  expect(steps.filter((s) => s.command.startsWith('ls ') && s.command.includes('train__')).map((s) => s.exit)).toEqual([0]);
  // As the unprivileged agent user in `main`: no token, no hidden data or scorer, no secret, no engine,
  // no finalize, no hidden split.
  expect(fs.readFileSync(path.join(acted.agentLogs, 'whoami.txt'), 'utf8')).toBe('agent');
  const p = probes(acted);
  expect(Object.keys(p).length).toBeGreaterThanOrEqual(8);
  expect(Object.entries(p).filter(([, v]) => v.leaked)).toEqual([]);
  // No file of the trial(s) (agent logs, verifier output, session) holds the secret's or the model key's value.
  for (const trialDir of new Set([acted.trialDir!, rewarded.trialDir!])) {
    const files = fs.readdirSync(trialDir, { recursive: true, encoding: 'utf8' }).map((f) => path.join(trialDir, f));
    for (const f of files)
      if (fs.statSync(f).isFile()) {
        expect(fs.readFileSync(f, 'utf8')).not.toContain(SECRET);
        expect(fs.readFileSync(f, 'utf8')).not.toContain(UPSTREAM_KEY);
      }
  }
  if (mode === 'mode-a') {
    // The optimizer's model call went through the task's gateway: the upstream saw the key, main only a token.
    const call = JSON.parse(fs.readFileSync(path.join(acted.agentLogs, 'model-call.json'), 'utf8')) as { status: number; body: string };
    expect(call.status).toBe(200);
    expect(JSON.parse(call.body)).toMatchObject({ choices: [{ message: { content: 'Hello world' } }] });
    const fromThisRun = upstream.seen.filter((r) => r.headers.authorization === `Bearer ${UPSTREAM_KEY}`);
    expect(fromThisRun.length).toBeGreaterThanOrEqual(1);
    expect(upstream.seen.every((r) => r.headers.authorization === `Bearer ${UPSTREAM_KEY}`)).toBe(true);
  }
}

realDescribe('a compiled task on real Harbor 0.25 and Docker', () => {
  const before = unavailable ? [] : dockerObjects();
  let dir = '';
  let upstream: FakeUpstream;
  const harbor = unavailable ? '' : harborBin();
  beforeAll(async () => {
    upstream = await startFakeUpstream('0.0.0.0');
    dir = examples(Number(new URL(upstream.url).port));
  });
  afterAll(async () => {
    await upstream.close();
    // Harbor removes the trial's containers, networks, volumes and built images; nothing else is left.
    if (!unavailable) expect(dockerObjects()).toEqual(before);
  });

  describe.each(CASES)('$mode', (c) => {
    const { mode, key, baseline, optimized } = c;
    let taskDir = '';
    let jobsDir = '';
    const env = { VERO_PROBE_SECRET: SECRET, VERO_TEST_UPSTREAM_KEY: UPSTREAM_KEY };
    beforeAll(async () => {
      jobsDir = path.join(dir, 'jobs', mode);
      taskDir = path.join(dir, 'tasks', mode);
      // The Temporal CLI and Harbor wheels hard-linked, the vero package packed once for both: the same files, in less time.
      const r = await buildTaskDir(path.join(dir, mode, 'build.yaml'), taskDir, { skipSecretCheck: true, linkRuntime: true });
      expect(r.warnings).toEqual([]);
    });

    test('the oracle: the reward is the baseline’s target score, computed on the trusted side', async () => {
      const o = await runCompiledTask({ harbor, taskDir, jobsDir, jobName: 'oracle', agent: { kind: 'oracle' }, env });
      expect({ exitCode: o.exitCode, exception: o.exception, reward: o.reward }).toEqual({
        exitCode: 0,
        exception: null,
        reward: { [key]: baseline },
      });
      // The oracle's solve.sh commits a no-op candidate and evaluates it on the selection split; that is what is rewarded.
      expect(o.finalize!.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(o.finalize!.candidates!.map((c) => c.split)).toEqual(['validation']);
      expectRanEveryCase(records(o)[0]!);
      expect(o.session).toEqual(expect.arrayContaining(['candidates.json', 'ledger.json']));
      if (mode === 'mode-b') expectWandbRun(o);
    });

    // Mode A runs the example optimizer in the crash-and-relaunch test below (each real trial costs minutes).
    if (mode === 'mode-b')
      test('the example optimizer: reward = the improved candidate’s target score, above the baseline’s; the trust boundary holds', async () => {
        const o = await runCompiledTask({
          harbor,
          taskDir,
          jobsDir,
          jobName: 'optimizer',
          env,
          agent: { kind: 'import', ...EXAMPLE_OPTIMIZER, kwargs: { probe_trust_boundary: 'true' } },
        });
        expectOptimizerOutcome(c, o, o, upstream);
        expectWandbRun(o);
      });

    if (mode === 'mode-a')
      test('the example optimizer, killed after its evaluations: the trial keeps its session; relaunched from it (--resume-from), the earlier candidate and spent budget are there and the reward is that candidate’s, above the baseline’s; the trust boundary holds', async () => {
        const crash = await runCompiledTask({
          harbor,
          taskDir,
          jobsDir,
          jobName: 'crash',
          env,
          agent: {
            kind: 'import',
            ...EXAMPLE_OPTIMIZER,
            kwargs: { probe_trust_boundary: 'true', reevaluate_seed: 'true', crash_after_selection: 'true' },
          },
        });
        expect(crash.exception?.exception_type).toBe('RuntimeError');
        expect(crash.reward).toBeNull();
        const rescued = path.join(crash.trialDir!, 'artifacts', 'vero-session');
        const recorded = (dir: string) =>
          (JSON.parse(fs.readFileSync(path.join(dir, 'candidates.json'), 'utf8')) as { records: EvalRecord[] }).records;
        expect(recorded(rescued).map((r) => [r.split, r.early_stop?.stopped])).toEqual([
          ['train', false],
          ['train', true],
          ['validation', false],
        ]);
        const [candidate, seed] = recorded(rescued).map((r) => r.commit);
        expect(recorded(rescued)[0]!.mean_score).toBe(1);
        expect(recorded(rescued)[2]).toMatchObject({ commit: candidate, mean_score: 1 });
        const seedRefund = expectStoppedEarly(recorded(rescued)[1]!, candidate!, seed!);
        expect(crash.session).toEqual(expect.arrayContaining(['candidates.bundle', 'candidates.json', 'ledger.json', 'session.json']));

        // The relaunch only looks: its workbench is the seed again, the candidate is the sidecar's.
        const resumed = await runCompiledTask({
          harbor,
          taskDir,
          jobsDir,
          jobName: 'resumed',
          env,
          resume: await resumeLaunch(taskDir, rescued),
          agent: { kind: 'import', ...EXAMPLE_OPTIMIZER, kwargs: { look_only: 'true' } },
        });
        expect({ exitCode: resumed.exitCode, exception: resumed.exception, reward: resumed.reward }).toEqual({
          exitCode: 0,
          exception: null,
          reward: { [key]: optimized },
        });
        expect(resumed.finalize!.commit).toBe(candidate);
        const session = path.join(resumed.trialDir!, 'artifacts', 'vero-session');
        expect(recorded(session).map((r) => [r.split, r.commit])).toEqual([
          ['train', candidate],
          ['train', seed],
          ['validation', candidate],
        ]);
        // The budget the crashed trial spent stays spent; the gateway's usage adds up over both trials.
        // The early-stopped evaluation's unrun cases were refunded once, by its verdict's count; its run stays spent.
        const ledger = JSON.parse(fs.readFileSync(path.join(session, 'ledger.json'), 'utf8')) as {
          budgets: Record<string, { total_run_budget: number; remaining_run_budget: number }>;
          reservations: { split: string; n_samples: number }[];
          refunds?: { split: string; n: number }[];
        };
        expect(ledger.reservations.map((r) => r.split)).toEqual(['train', 'train', 'validation']);
        expect(ledger.refunds).toEqual([expect.objectContaining({ split: 'train', n: seedRefund })]);
        for (const [split, runs] of [
          ['train', 2],
          ['validation', 1],
        ] as const)
          expect(ledger.budgets[split]!.remaining_run_budget).toBe(ledger.budgets[split]!.total_run_budget - runs);
        expect(Meter.load(path.join(session, 'gateway', 'meter.json')).scopes.producer!.requests).toBe(2);
        // What the optimizer did and could not do, in the trial it acted in; what its candidate earned, in the relaunch.
        expectOptimizerOutcome(c, crash, resumed, upstream);
      });
  });
});
