/**
 * scaleapi/vero's own build files (test/fixtures/vero, unchanged from vero at 0b0e867): each is read with vero's
 * meaning and defaults into our schema, what cannot be honoured is refused by name, all at once; `${NAME}`
 * parameters; Jinja instruction templates; and a vero file building into a task end to end.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- vero's YAML is read untyped here, field by field, as vero reads it */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { BuildConfig, BuildConfigFile, loadBuildConfig, readBuildDocument } from '../../compiler/build-config';
import { buildTaskDir } from '../../compiler/compile';
import { instructionText } from '../../compiler/instruction-template';
import { imagesToPreload } from '../../compiler/nested-docker';
import { agentPythonPath } from '../../compiler/vero-agent-project';
import { serveConfig } from '../../compiler/render';
import { ServeConfig } from '../../model/compiled-task/serve-config';
import { packageDatasetDigest, parseDatasetRef } from '../../harbor/dataset-ref';
import { ROOT, tempDir } from '../helpers/fixtures';
import { runVero } from '../helpers/process';
import { circleExample } from '../helpers/circle-packing';

jest.setTimeout(120_000);

const VERO = path.join(ROOT, 'test/fixtures/vero');
const BENCH = (b: string, f = 'build.yaml') => `harness-engineering-bench/${b}/baseline/${f}`;

interface VeroManifest {
  task_source: string;
  dataset_version?: string;
  tasks: { name: string; ref?: string }[];
}
const manifestOf = (bench: string) =>
  JSON.parse(fs.readFileSync(path.join(VERO, 'harness-engineering-bench', bench, 'partitions/manifest.json'), 'utf8')) as VeroManifest;

/**
 * A local registry.json (Harbor's --registry-path form) holding the datasets vero's files pin, made from their
 * task_manifests: a small fake task under each name. A package dataset is held at its digest, its tasks with the
 * digests the manifest records where they hash to it (tau3's and Terminal-Bench's datasets also hold files the
 * manifests do not record, so theirs are listed without).
 */
function veroRegistry(entries = (m: VeroManifest) => m, listDigests = (m: VeroManifest, hashToPin: boolean) => hashToPin): string {
  const dir = tempDir('vero-registry-');
  const datasets = new Map<string, unknown>();
  for (const bench of fs.readdirSync(path.join(VERO, 'harness-engineering-bench'))) {
    const m = entries(manifestOf(bench));
    const ref = parseDatasetRef(m.task_source);
    if (!m.task_source.includes('@') || !ref) continue;
    const [name, version] = m.task_source.split('@') as [string, string];
    const digests = m.tasks.map((t) => t.ref ?? '');
    const withDigests = listDigests(m, ref.form === 'package' && packageDatasetDigest(digests) === version);
    const tasks = m.tasks.map((t) => {
      const rel = `tasks/${bench}/${t.name.split('/').at(-1)!}`;
      fs.mkdirSync(path.join(dir, rel), { recursive: true });
      fs.writeFileSync(path.join(dir, rel, 'task.toml'), `[task]\nname = "${t.name}"\n`);
      fs.writeFileSync(path.join(dir, rel, 'instruction.md'), `A stand-in for ${t.name}.\n`);
      return { name: t.name, path: rel, ...(withDigests ? { digest: t.ref } : {}) };
    });
    datasets.set(m.task_source, { name, version, description: `${bench} (fake tasks)`, tasks });
  }
  const file = path.join(dir, 'registry.json');
  fs.writeFileSync(file, JSON.stringify([...datasets.values()], null, 2));
  return file;
}
const REGISTRY = veroRegistry();

/** Each file's fields that cannot be honoured, as the build names them (vero's defaults for ${params}). */
const REFUSED: Record<string, string[]> = {
  'examples/harness-conformance/build.yaml': [],
  'examples/harbor-circle-packing/build.yaml': [],
  [BENCH('browsecomp-plus')]: ['task_source'],
  [BENCH('gaia')]: [],
  [BENCH('gaia', 'build.shell.yaml')]: [],
  [BENCH('officeqa')]: ['task_source'],
  [BENCH('swe-atlas-qna')]: [],
  [BENCH('swe-atlas-qna', 'build.gpt54mini.yaml')]: [],
  [BENCH('swe-bench-pro')]: [],
  [BENCH('swe-bench-pro', 'build.sample.yaml')]: [],
  [BENCH('tau3')]: [],
  [BENCH('terminal-bench')]: [],
  [BENCH('terminal-bench', 'build.azure.yaml')]: [],
};

/** The vero file as vero's loader reads it with no parameters set: every `${NAME:-default}` at its default. */
function veroView(file: string): Record<string, any> {
  const text = fs.readFileSync(file, 'utf8').replace(/\$\{[A-Za-z_][A-Za-z0-9_]*:-([^}]*)\}/g, '$1');
  return parseYaml(text) as Record<string, any>;
}

/** What the file compiles to (registry sources from REGISTRY): our config (mapped) and the serve.json the sidecar would load. */
function compiled(file: string, registry = REGISTRY): { config: BuildConfig; serve: ServeConfig; refusals: string[] } {
  const doc = readBuildDocument(file, {}, {}, { path: registry });
  const config = { ...BuildConfigFile.parse(doc.raw), file, baseDir: path.dirname(file), format: doc.format, notes: doc.notes };
  const serve = serveConfig({ config, baseCommit: '0'.repeat(40), splitSizes: {} });
  return { config, serve, refusals: doc.refusals };
}

test('with a registry holding their datasets, every file refused for nothing else builds unchanged (W&B online: no WANDB_MODE)', () => {
  const buildable = Object.keys(REFUSED).filter((rel) => REFUSED[rel]!.length === 0);
  expect(buildable).toHaveLength(11); // harness-conformance, harbor-circle-packing and the nine registry-based benchmark files
  const before = process.env.WANDB_MODE;
  delete process.env.WANDB_MODE;
  try {
    for (const rel of buildable) expect(() => loadBuildConfig(path.join(VERO, rel), {}, { path: REGISTRY })).not.toThrow();
  } finally {
    if (before !== undefined) process.env.WANDB_MODE = before;
  }
});

test.each(['browsecomp-plus', 'officeqa'])(
  '%s is refused only for its missing ../tasks: given task dirs under every name its manifest lists, it builds unchanged',
  (bench) => {
    const dir = path.join(tempDir(), bench);
    fs.cpSync(path.join(VERO, 'harness-engineering-bench', bench), dir, { recursive: true });
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'partitions/manifest.json'), 'utf8')) as {
      tasks: (string | { name: string })[];
    };
    const names = manifest.tasks.map((t) => (typeof t === 'string' ? t : t.name));
    for (const name of names) {
      const task = path.join(dir, 'tasks', name);
      fs.mkdirSync(path.join(task, 'environment'), { recursive: true });
      fs.mkdirSync(path.join(task, 'tests'));
      fs.writeFileSync(path.join(task, 'task.toml'), '[agent]\ntimeout_sec = 60\n');
      fs.writeFileSync(path.join(task, 'instruction.md'), 'a fake task\n');
      fs.writeFileSync(path.join(task, 'environment', 'Dockerfile'), 'FROM debian:bookworm-slim\n');
      fs.writeFileSync(path.join(task, 'tests', 'test.sh'), '#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n');
    }
    const file = path.join(dir, 'baseline', 'build.yaml');
    const before = process.env.WANDB_MODE;
    delete process.env.WANDB_MODE; // vero's default: online
    try {
      const config = loadBuildConfig(file, {}, { path: REGISTRY });
      expect({ format: config.format, mode: config.mode, splits: config.splits.map((x) => x.split).sort() }).toEqual({
        format: 'vero',
        mode: 'B',
        splits: ['development', 'test', 'validation'],
      });
      fs.rmSync(path.join(dir, 'tasks', names[0]!), { recursive: true });
      expect(() => loadBuildConfig(file, {}, { path: REGISTRY })).toThrow(`unknown task name(s) ${names[0]}`);
      fs.rmSync(path.join(dir, 'tasks'), { recursive: true });
      expect(() => loadBuildConfig(file, {}, { path: REGISTRY })).toThrow(`task_source: ${path.join(dir, 'tasks')} does not exist`);
    } finally {
      if (before !== undefined) process.env.WANDB_MODE = before;
    }
  },
);

describe.each(Object.keys(REFUSED))('vero’s %s', (rel) => {
  const file = path.join(VERO, rel);
  const v = veroView(file);
  const { config, serve, refusals } = compiled(file);

  test('is read as vero’s format; what cannot be honoured is refused by name with its reason, all at once', () => {
    expect(config.format).toBe('vero');
    expect(refusals.map((r) => /\(vero format\): ([^:]+):/.exec(r)?.[1])).toEqual(REFUSED[rel]);
    for (const r of refusals) expect(r.split(': ').slice(2).join(': ').length).toBeGreaterThan(20); // a reason, not just a name
    let message = '';
    try {
      loadBuildConfig(file, {}, { path: REGISTRY });
    } catch (e) {
      message = (e as Error).message;
    }
    for (const field of REFUSED[rel]!) expect(message).toContain(`(vero format): ${field}:`);
    if (typeof v.task_source === 'string' && v.task_source.includes('@')) {
      // Pinned against the local registry: a package by its own digest (verified), a version by its entry's digest.
      expect(message).not.toContain('task_source:');
      expect(config.inner_dataset).toEqual({
        ref: v.task_source,
        registry_path: REGISTRY,
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      });
      if (v.task_source.includes('@sha256:')) expect(config.inner_dataset!.digest).toBe(v.task_source.split('@')[1]);
      expect(serve.mode_b!.task_source).toMatchObject({ dataset: v.task_source, digest: config.inner_dataset!.digest });
    } else if (typeof v.task_source === 'string' && !fs.existsSync(path.join(path.dirname(file), v.task_source)))
      expect(message).toContain(`task_source: ${path.join(path.dirname(file), v.task_source)} does not exist`);
  });

  test('access tiers, k-anonymity floors and budgets mean what vero’s agent_access says', () => {
    const declared = Object.keys(v.partitions ?? v.partition_files);
    expect(serve.splits.map((s) => s.split)).toEqual(declared);
    for (const s of serve.splits) {
      const a = (v.agent_access as any[]).find((x) => x.partition === s.split);
      if (!a) expect(s.access).toBe('no_access');
      else if ((a.disclosure ?? 'aggregate') === 'full') expect(s.access).toBe('viewable');
      else expect(s).toMatchObject({ split: s.split, access: 'non_viewable', min_aggregate_cases: a.min_aggregate_cases ?? 5 });
      // Case resources: exactly where vero's file exposes them.
      // (a command backend's resources are its agent_context_inputs: none here)
      expect(s.expose_case_resources ?? false).toBe(v.evaluation_backend !== 'command' && (a?.expose_case_resources ?? false));
    }
    expect(serve.budgets).toEqual(
      (v.agent_access as any[]).map((a) => ({
        split: a.partition,
        ...(a.total_runs !== undefined ? { total_run_budget: a.total_runs } : {}),
        ...(a.total_cases !== undefined ? { total_sample_budget: a.total_cases } : {}),
        ...(a.total_runs === undefined && a.total_cases === undefined ? { total_run_budget: 1_000_000 } : {}),
      })),
    );
    expect(serve.selection_split).toBe(v.selection_partition);
    expect(serve.min_selection_coverage).toBe(v.selection_coverage_threshold ?? 0.9);
  });

  test('targets with attempts, aggregation, failure values and pinned baselines; reward mode; retries and timeouts', () => {
    expect(serve.targets).toEqual(
      (v.targets as any[]).map((t) => ({
        split: t.partition,
        reward_key: t.reward_key ?? 'reward',
        failure_value: t.failure_value ?? 0,
        ...(t.baseline_reward !== undefined ? { baseline_reward: t.baseline_reward } : {}),
        ...(t.n_attempts !== undefined ? { n_attempts: t.n_attempts } : {}),
        ...(t.aggregate_attempts !== undefined ? { aggregate: t.aggregate_attempts } : {}),
      })),
    );
    expect(serve.reward_mode).toBe(v.reward_mode ?? 'auto_best');
    expect(serve.submit_enabled).toBe((v.reward_mode ?? 'auto_best') === 'submit'); // a submission is possible, auto_best the fallback
    expect(serve.auto_best_k).toBe(v.rescore_top_k ?? 3);
    expect(serve.baseline_floor).toBe(v.baseline_floor ?? false);
    expect(serve.score_baseline).toBe(v.score_baseline ?? true); // vero's default is true, ours false
    expect(serve.timeout_sec).toBe(v.timeout_seconds ?? 1800);
    expect(config.verifier_timeout).toBe(v.verifier_timeout_seconds ?? v.timeout_seconds ?? 1800);
    expect(config.optimizer_env).toEqual(v.agent_env ?? {});
    expect(serve.max_concurrency).toBe(v.max_concurrency ?? 8);
    if (v.evaluation_backend === 'command') return; // no nested harbor run: below, what only a harbor backend has
    expect(serve.scoring).toMatchObject({
      aggregate: v.aggregate_attempts ?? 'mean', // vero's default is mean, ours best
      trusted_task_attempts: v.infrastructure_max_attempts ?? 3,
      agent_task_attempts: v.infrastructure_max_attempts ?? 3,
      error_rate_threshold: v.error_rate_threshold ?? 0.1, // vero's default 0.1, ours 1
    });
    expect(serve.mode_b!.harbor).toMatchObject({
      environment: v.environment_name ?? 'modal', // vero's default is modal, ours docker
      n_attempts: v.n_attempts ?? 1,
      max_retries: v.max_retries ?? 2, // vero's default 2, ours 0
      retry_wait_multiplier: v.retry_wait_multiplier ?? 2,
      retry_min_wait_sec: v.retry_min_wait_seconds ?? 4,
      retry_max_wait_sec: v.retry_max_wait_seconds ?? 60,
    });
    const ratio = (v.case_timeout_seconds ?? 180) / (v.task_agent_timeout_seconds ?? 600);
    expect(serve.mode_b!.harbor.agent_timeout_multiplier).toBe(ratio === 1 ? undefined : ratio);
    // Feedback to the optimizer: vero's transcripts, their cap (default 3000 bytes) and per-attempt detail.
    const feedback = {
      transcripts: v.feedback_transcripts ?? false,
      max_bytes: v.feedback_max_bytes ?? 3000,
      attempt_detail: v.expose_attempt_detail ?? false,
    };
    expect(serve.feedback).toEqual(feedback.transcripts || feedback.attempt_detail ? feedback : undefined);
  });

  test('gateway scopes, models and limits; finalization absent is a copy of evaluation', () => {
    const g = v.inference_gateway;
    const scope = (s: any) => ({
      models: s.allowed_models,
      aliases: s.model_aliases ?? {},
      allow_unbounded_input: false,
      ...(s.max_requests !== undefined ? { max_requests: s.max_requests } : {}),
      ...(s.max_tokens !== undefined ? { max_input_tokens: s.max_tokens, max_output_tokens: s.max_tokens } : {}),
      max_concurrency: s.max_concurrency ?? 8,
    });
    expect(serve.gateway!.scopes).toEqual({
      producer: scope(g.producer),
      evaluation: scope(g.evaluation),
      finalization: scope(g.finalization ?? g.evaluation),
    });
    expect(serve.gateway!.upstreams.openai).toEqual({
      base_url: 'https://api.openai.com',
      key_env: g.upstream_api_key_env ?? 'OPENAI_API_KEY',
    });
    expect(serve.gateway!.request_log.max_body_bytes).toBe(g.request_log_body_bytes ?? 16384);
    expect(serve.gateway!.request_log.attribution).toBe(g.request_log_attribution ?? false);
  });
});

test('harbor-circle-packing: vero’s command backend is mode A with its harness, its metric ranks, its constraint holds', () => {
  const { config, serve, refusals } = compiled(path.join(VERO, 'examples/harbor-circle-packing/build.yaml'));
  expect(refusals).toEqual([]);
  expect(config.mode).toBe('A');
  expect(serve.objective).toEqual({
    direction: 'maximize',
    failure_value: 0,
    metric: 'sum_radii',
    constraints: [{ metric: 'valid', operator: '==', value: 1 }],
  });
  expect(serve.mode_a).toEqual({
    harness: {
      dir: '/opt/harness',
      command: [
        'python',
        '{harness}/evaluate.py',
        '--workspace',
        '{workspace}',
        '--request',
        '{request}',
        '--report',
        '{report}',
        '--artifacts',
        '{artifacts}',
      ],
      working_directory: '.',
      env: {},
      passthrough_env: ['PATH', 'HOME', 'UV_CACHE_DIR'],
    },
    partition: { development: ['dev'], validation: ['val'], test: ['holdout'] },
  });
  expect(serve.mode_b).toBeUndefined();
  expect(serve.targets).toEqual([{ split: 'test', reward_key: 'sum_radii', failure_value: 0 }]);
  expect(config.notes.join('\n')).toContain('a harness that exits non-zero or writes no report is an infrastructure failure');
});

test('a command backend is refused where vero refuses it, and what it cannot do is named', () => {
  const dir = tempDir();
  fs.cpSync(path.join(VERO, 'examples/harbor-circle-packing'), dir, { recursive: true });
  const file = path.join(dir, 'build.yaml');
  const text = fs.readFileSync(file, 'utf8');
  const refusalsOf = (t: string) => (fs.writeFileSync(file, t), readBuildDocument(file, {}, {}).refusals);
  expect(refusalsOf(text.replace(/^evaluation_backend: command$/m, 'evaluation_backend: harbor'))).toContainEqual(
    expect.stringContaining('command_backend: requires evaluation_backend: command'),
  );
  expect(refusalsOf(text.replace('  passthrough_environment:', '  staged_inputs: {data: x}\n  passthrough_environment:'))).toContainEqual(
    expect.stringContaining('command_backend.staged_inputs: staged inputs'),
  );
  expect(refusalsOf(text.replace('    metric: sum_radii', '    metric: sum_radii\n    aggregation: mean'))).toContainEqual(
    expect.stringContaining('a selector aggregates only as "report"'),
  );
  fs.writeFileSync(file, text.replace('"{artifacts}"', '"{input:x}"'));
  expect(() => loadBuildConfig(file)).toThrow('harness.command: unknown placeholder(s) {input:x}');
  fs.writeFileSync(file, text.replace('harness_source: environment/sidecar/harness', 'harness_source: environment/agent-seed'));
  expect(() => loadBuildConfig(file)).toThrow('is inside agent_repo; a trusted harness must not come from the agent');
});

test('a command harness is never handed the gateway’s upstream key or the sidecar’s VERO_ variables (candidate code runs beside it)', () => {
  const dir = tempDir();
  fs.cpSync(path.join(VERO, 'examples/harbor-circle-packing'), dir, { recursive: true });
  const file = path.join(dir, 'build.yaml');
  const text = fs.readFileSync(file, 'utf8');
  fs.writeFileSync(file, text.replace('[PATH, HOME, UV_CACHE_DIR]', '[PATH, HOME, OPENAI_API_KEY, VERO_SIDECAR_TOKEN]'));
  let message = '';
  try {
    loadBuildConfig(file, { optimizer_model: 'gpt-5.4' });
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toContain("harness.passthrough_env: OPENAI_API_KEY is one of the sidecar's own keys");
  expect(message).toContain("harness.passthrough_env: VERO_SIDECAR_TOKEN is one of the sidecar's own VERO_ variables");
  // Nor W&B's key, for an online run (the sidecar's own key as well).
  fs.writeFileSync(
    file,
    `${text.replace('[PATH, HOME, UV_CACHE_DIR]', '[PATH, HOME, WANDB_API_KEY]')}\nwandb:\n  project: circles\n  mode: online\n`,
  );
  try {
    loadBuildConfig(file, { optimizer_model: 'gpt-5.4' });
    message = '';
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toContain("harness.passthrough_env: WANDB_API_KEY is one of the sidecar's own keys");
});

test('vero’s workspace_overlays land in the optimizer’s workspace as vero copies them, out of its commits; disclose_budget: false hides the budget', async () => {
  const build = circleExample();
  const dir = path.dirname(build);
  fs.mkdirSync(path.join(dir, 'skills', 'mine'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'skills', 'mine', 'SKILL.md'), 'a skill\n');
  fs.writeFileSync(path.join(dir, 'AGENTS.md'), 'notes for the optimizer\n');
  const text = fs.readFileSync(build, 'utf8');
  fs.writeFileSync(
    build,
    `${text}\nworkspace_overlays:\n  - source: skills\n    dest: .claude/skills\n  - source: AGENTS.md\ndisclose_budget: false\n`,
  );
  const task = path.join(tempDir(), 'task');
  await buildTaskDir(build, task, { skipSecretCheck: true, linkRuntime: true });
  const overlay = path.join(task, 'environment', 'overlay');
  expect(fs.readFileSync(path.join(overlay, '.claude/skills/mine/SKILL.md'), 'utf8')).toBe('a skill\n'); // a dir: its contents
  expect(fs.readFileSync(path.join(overlay, 'AGENTS.md'), 'utf8')).toBe('notes for the optimizer\n'); // a file: dest/<name>
  expect(fs.readFileSync(path.join(task, 'environment/Dockerfile'), 'utf8')).toContain('COPY overlay /opt/overlay');
  // The seed script's overlay lines, run on a workspace here: the files land; the non-root dest is not committed.
  const work = tempDir();
  execFileSync('git', ['init', '-q', work]);
  const seed = fs.readFileSync(path.join(task, 'environment/main/seed.sh'), 'utf8');
  const lines = seed.split('\n').filter((l) => l.includes('/opt/overlay') || l.includes('.git/info'));
  expect(lines).toHaveLength(3);
  execFileSync('bash', ['-euc', lines.join('\n').replaceAll('/opt/overlay', overlay).replaceAll('/workspace/agent', work)]);
  execFileSync('bash', ['-euc', lines.join('\n').replaceAll('/opt/overlay', overlay).replaceAll('/workspace/agent', work)]); // every start
  expect(fs.readFileSync(path.join(work, '.claude/skills/mine/SKILL.md'), 'utf8')).toBe('a skill\n');
  expect(
    fs
      .readFileSync(path.join(work, '.git/info/exclude'), 'utf8')
      .split('\n')
      .filter((l) => l === '/.claude/'),
  ).toHaveLength(1);
  expect(execFileSync('git', ['-C', work, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('?? AGENTS.md\n');
  // disclose_budget: false: the sidecar is told, and the instruction shows no budget.
  const serve = JSON.parse(fs.readFileSync(path.join(task, 'environment/sidecar/serve.json'), 'utf8')) as Record<string, unknown>;
  expect(serve.disclose_budget).toBe(false);
  const instruction = fs.readFileSync(path.join(task, 'instruction.md'), 'utf8');
  expect(instruction).toContain('| `validation` | non_viewable |');
  expect(instruction).toContain('metered (not disclosed)');
  expect(instruction).not.toContain('10 run(s)');
  expect(instruction).toContain('A candidate must satisfy `valid == 1`');
  expect(instruction).toContain("The score is the evaluation's `sum_radii` metric.");
});

test('without a harness, the score is `score` and constraints name score, error_rate or score_stddev; a race checks none', () => {
  const file = path.join(tempDir(), 'build.yaml');
  fs.writeFileSync(
    file,
    'name: acme/p\nagent_repo: .\nmode: A\ndataset: d\ninference: {command: x}\nscorer: {dir: s, command: y}\nsplits: [{split: train, access: viewable}]\ntargets: [{split: train}]\nauto_best_race: {}\nobjective: {metric: sum_radii, constraints: [{metric: valid, operator: "==", value: 1}]}\n',
  );
  let message = '';
  try {
    loadBuildConfig(file);
  } catch (e) {
    message = (e as Error).message;
  }
  expect(message).toContain('objective.constraints: a race (auto_best_race) ranks by the score alone and checks no constraint');
  expect(message).toContain('objective.metric: "sum_radii": only "score" ranks without a command harness (its mean)');
  expect(message).toContain(
    'objective.constraints.0.metric: "valid" is not reported here (expected one of score, error_rate, score_stddev)',
  );
});

test('spot values: Terminal-Bench’s pinned baseline over 3 averaged attempts, its Modal kwargs, SWE-bench Pro’s timeout ratio', () => {
  const tb = compiled(path.join(VERO, BENCH('terminal-bench'))).serve;
  expect(tb.targets).toEqual([
    { split: 'test', reward_key: 'reward', failure_value: 0, baseline_reward: 0.2407, n_attempts: 3, aggregate: 'mean' },
  ]);
  expect(tb.mode_b!.harbor).toMatchObject({
    environment_kwargs: { app_name: 'harness-engineering-bench', sandbox_idle_timeout_secs: '3600' },
    extra_args: [],
    max_retries: 4,
    retry_max_wait_sec: 120,
  });
  expect(tb.gateway!.scopes.finalization.max_input_tokens).toBe(1_100_000_000);
  expect(compiled(path.join(VERO, BENCH('swe-bench-pro'))).serve.mode_b!.harbor.agent_timeout_multiplier).toBe(0.6);
});

describe('registry task sources of vero’s files', () => {
  const GAIA = path.join(VERO, BENCH('gaia'));
  const GAIA_PIN = manifestOf('gaia').dataset_version!;
  const refusalsWith = (registry: string) => compiled(GAIA, registry).refusals.filter((r) => /task_source:|task_manifest:/.test(r));

  test('without a registry they compile too: recorded as vero wrote them, with a note that the sidecar’s Harbor resolves them', () => {
    for (const [rel, bench] of [
      [BENCH('gaia'), 'gaia'],
      [BENCH('swe-bench-pro'), 'swe-bench-pro'],
    ] as const) {
      const doc = readBuildDocument(path.join(VERO, rel), {}, {});
      expect(doc.refusals.filter((r) => r.includes('task_source'))).toEqual([]);
      const src = manifestOf(bench).task_source;
      expect((doc.raw as { inner_dataset: unknown }).inner_dataset).toEqual({
        ref: src,
        ...(src.includes('@sha256:') ? { digest: src.split('@')[1] } : {}),
      });
      expect(doc.notes).toContainEqual(expect.stringMatching(/^task_source: .*no local registry .*the sidecar's Harbor resolves it from/));
    }
  });

  test('a registry that holds the dataset at another digest is refused with both digests named', () => {
    const other = `sha256:${'e'.repeat(64)}`;
    const registry = veroRegistry((m) => (m.task_source.startsWith('gaia/') ? { ...m, task_source: `gaia/gaia@${other}` } : m));
    expect(refusalsWith(registry)).toEqual([
      `${GAIA} (vero format): task_source: digest mismatch: gaia/gaia@${GAIA_PIN} pins ${GAIA_PIN}, but ${registry} holds gaia/gaia at ${other}`,
    ]);
  });

  test('a task whose digest differs between the registry and the task_manifest is refused naming both', () => {
    const wrong = `sha256:${'f'.repeat(64)}`;
    const registry = veroRegistry(
      (m) => (m.task_source.startsWith('gaia/') ? { ...m, tasks: m.tasks.map((t, i) => (i === 0 ? { ...t, ref: wrong } : t)) } : m),
      (m, hashToPin) => hashToPin || m.task_source.startsWith('gaia/'),
    );
    const first = manifestOf('gaia').tasks[0]!;
    // The registry's own entry no longer hashes to its digest, and the manifest disagrees with it about the task.
    expect(refusalsWith(registry)).toEqual([
      expect.stringMatching(
        new RegExp(`task_source: digest mismatch: .* lists gaia/gaia at ${GAIA_PIN}, but its tasks' digests hash to sha256:`),
      ),
      `${GAIA} (vero format): task_manifest: digest mismatch for 1 task(s): ${first.name} (manifest ${first.ref}, registry ${wrong})`,
    ]);
  });

  test('vero build --print-config --registry-path shows SWE-bench Pro’s version pinned to its digest', async () => {
    const r = await runVero(['build', '-c', path.join(VERO, BENCH('swe-bench-pro')), '--print-config', '--registry-path', REGISTRY]);
    expect(r.code).toBe(0); // nothing of it is refused
    const printed = parseYaml(r.stdout.replace(/^#.*\n/gm, '')) as Record<string, any>;
    expect(printed.inner_dataset).toEqual({ ref: 'swebenchpro@1.0', registry_path: REGISTRY, digest: expect.stringMatching(/^sha256:/) });
    expect(r.stdout).toMatch(/^# note: task_source: swebenchpro@1\.0 pinned at sha256:[0-9a-f]{64} \(731 tasks\)$/m);
    expect(r.stderr).not.toContain('task_source:');
  });
});

describe('build parameters', () => {
  const write = (text: string) => {
    const file = path.join(tempDir(), 'build.yaml');
    fs.writeFileSync(file, text);
    return file;
  };
  const ours = (extra: string) =>
    `name: acme/p\nagent_repo: .\nmode: A\ndataset: d\ninference: {command: x}\nscorer: {dir: s, command: y}\nsplits: [{split: train, access: viewable}]\ntargets: [{split: train}]\n${extra}`;

  test('--param over the environment over the default; an unquoted value is read as YAML, a quoted one stays a string', () => {
    const file = write(ours('max_concurrency: ${CONC:-8}\ndescription: "${DESC:-none}"\nsecrets: ["${S1}"]\n'));
    const doc = (params: Record<string, string>, env: Record<string, string>) =>
      readBuildDocument(file, params, env).raw as Record<string, unknown>;
    expect(doc({}, { S1: 'A' })).toMatchObject({ max_concurrency: 8, description: 'none', secrets: ['A'] });
    expect(doc({}, { S1: 'A', CONC: '3', DESC: '12' })).toMatchObject({ max_concurrency: 3, description: '12' });
    expect(doc({ CONC: '5', S1: 'B' }, { S1: 'A', CONC: '3' })).toMatchObject({ max_concurrency: 5, secrets: ['B'] });
    // An empty value is unset (vero's rule): the default applies.
    expect(doc({ CONC: '' }, { S1: 'A' })).toMatchObject({ max_concurrency: 8 });
  });

  test('every missing parameter is named with file:line:column, all at once; ${NAME:?message} carries its message', () => {
    const file = write(ours('description: >-\n  a ${FIRST} and\n  ${SECOND:?say which model}\nsecrets: ["${THIRD}"]\n'));
    let message = '';
    try {
      loadBuildConfig(file);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message.split('\n')).toEqual([
      `${file}:10:5: build parameter FIRST is unset; pass --param FIRST=VALUE or set the environment variable`,
      `${file}:11:3: required build parameter SECOND is unset: say which model`,
      `${file}:12:12: build parameter THIRD is unset; pass --param THIRD=VALUE or set the environment variable`,
    ]);
  });

  test('vero’s own file: ${target_model} follows --param into the harbor model and the evaluation allow-list', () => {
    const file = path.join(VERO, 'examples/harness-conformance/build.yaml');
    const doc = readBuildDocument(file, { target_model: 'openai/gpt-5.4-mini', inner_env: 'docker' }, {});
    const c = BuildConfigFile.parse(doc.raw);
    expect(c.harbor!.model).toBe('openai/gpt-5.4-mini');
    expect(c.harbor!.environment).toBe('docker');
    expect(c.gateway!.scopes.evaluation.models).toEqual(['openai/gpt-5.4-mini']);
  });

  test('a --param value is checked where its field is typed: a misspelt environment is refused by name, before anything is built', () => {
    const file = path.join(VERO, 'examples/harness-conformance/build.yaml');
    let message = '';
    try {
      loadBuildConfig(file, { target_model: 'openai/gpt-5.4-mini', inner_env: 'dockr' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('harbor.environment: "dockr" is not a Harbor environment (expected one of aca-sandbox, ');
    expect(() => loadBuildConfig(file, { target_model: 'openai/gpt-5.4-mini', inner_env: 'my_envs.fast:FastEnv' })).not.toThrow(
      /harbor\.environment/,
    );
  });
});

describe('instruction templates (Jinja, rendered by nunjucks)', () => {
  const base = () => {
    const doc = readBuildDocument(path.join(VERO, BENCH('gaia', 'build.shell.yaml')), {}, {});
    return { ...BuildConfigFile.parse(doc.raw), file: 'gaia', baseDir: VERO, format: 'vero' as const, notes: [] };
  };

  test('gaia’s shell template extends the built-in: its framing replaces ours, the protocol is inherited', () => {
    const text = instructionText(base());
    expect(text).toMatch(/^# Build the program, then optimize it\n\nThe program in `\/workspace\/agent` is a skeleton\./);
    expect(text).toContain('The trusted evaluation sidecar owns the cases, scoring,\nbudget, and final candidate selection.'); // disclose_budget
    expect(text).toContain('## Objective');
    expect(text).not.toContain('# Optimize the agent in /workspace/agent');
    expect(text).toContain('## How to evaluate a candidate');
    expect(text).toContain('`vero eval --split validation`');
    // instruct_multifidelity and instruct_exhaust_budget (both true here) add vero's budget guidance.
    expect(text).toContain('## Allocate the evaluation budget');
    expect(text).toContain('Aggregate-only requests must cover at least 5 cases');
    expect(text).toContain('Unspent evaluation budget is wasted');
  });

  test('an undefined variable or a syntax error in a template is a config error naming it', () => {
    const dir = tempDir();
    for (const [name, src] of [
      ['undef.md.j2', '{% extends "instruction.md.j2" %}{% block framing %}{{ no_such_thing }}{% endblock %}'],
      ['syntax.md.j2', '{% if %}'],
    ]) {
      fs.writeFileSync(path.join(dir, name!), src!);
      expect(() => instructionText({ ...base(), instruction: { ...base().instruction, template: path.join(dir, name!) } })).toThrow(
        new RegExp(`instruction template .*${name!.replace('.', '\\.')}`),
      );
    }
  });
});

test('vero’s harness-conformance builds, unchanged, into a task that means what vero’s file says', async () => {
  const dir = path.join(tempDir(), 'conformance');
  fs.cpSync(path.join(VERO, 'examples/harness-conformance'), dir, { recursive: true });
  const git = (...a: string[]) => execFileSync('git', ['-C', path.join(dir, 'target'), '-c', 'user.name=t', '-c', 'user.email=t@t', ...a]);
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'seed');
  const out = path.join(tempDir(), 'task');
  const r = await buildTaskDir(path.join(dir, 'build.yaml'), out, {
    skipSecretCheck: true,
    linkRuntime: true,
    params: { target_model: 'openai/gpt-5.4-mini' },
  });
  expect(r.warnings).toEqual(
    expect.arrayContaining([
      'harbor_requirement: harbor[modal]==0.20.0 — the sidecar runs Harbor 0.26.0 (harbor_version; vero-harbor supports 0.25.0, 0.26.0)',
      expect.stringMatching(/^verifier_timeout: 1800 s is below finalize's worst case/),
      "agent_repo: vero installs it as a project (uv run --project); here the candidate's src/ is on the nested harbor's PYTHONPATH (harbor.python_path), its dependencies openai==2.46.0 are installed beside the sidecar's Harbor when the task is built (harbor_packages; a candidate's changes to them are not), and harbor==0.20.0 is the sidecar's Harbor 0.26.0",
    ]),
  );
  const serve = ServeConfig.parse(JSON.parse(fs.readFileSync(path.join(out, 'environment/sidecar/serve.json'), 'utf8')));
  expect(serve).toMatchObject({
    task_name: 'vero/harness-conformance',
    reward_mode: 'submit',
    submit_enabled: true,
    score_baseline: false,
    auto_best_k: 1,
    splits: [
      { split: 'development', access: 'viewable', expose_case_resources: true },
      { split: 'validation', access: 'non_viewable', min_aggregate_cases: 2 },
      { split: 'test', access: 'no_access' },
    ],
    scoring: { aggregate: 'best', trusted_task_attempts: 2, error_rate_threshold: 0.5 },
    feedback: { transcripts: true, max_bytes: 8000, attempt_detail: false },
  });
  expect(serve.mode_b!.partition).toEqual({
    development: ['conformance-01', 'conformance-02'],
    validation: ['conformance-03', 'conformance-04'],
    test: ['conformance-05', 'conformance-06'],
  });
  expect(serve.mode_b!.harbor).toMatchObject({
    agent: 'conformance_agent.agent:ConformanceAgent',
    // vero installs the target as a project (uv run --project): its src layout's package imports from src/.
    python_path: ['src'],
    model: 'openai/gpt-5.4-mini',
    max_retries: 1,
  });
  // Its target's dependencies (Harbor excepted) go into the sidecar's Harbor environment, from wheels the build fetched.
  expect(fs.readFileSync(path.join(out, 'environment/sidecar/Dockerfile'), 'utf8')).toContain(
    '--find-links /tmp/harbor-wheelhouse harbor==0.26.0 openai==2.46.0',
  );
  expect(fs.readdirSync(path.join(out, 'environment/sidecar/harbor-wheelhouse'))).toContain('openai-2.46.0-py3-none-any.whl');
  const toml = parseToml(fs.readFileSync(path.join(out, 'task.toml'), 'utf8')) as Record<string, Record<string, unknown>>;
  expect(toml.verifier!.timeout_sec).toBe(1800);
  expect(toml.environment!.build_timeout_sec).toBe(1800);
  const compose = parseYaml(fs.readFileSync(path.join(out, 'environment/docker-compose.yaml'), 'utf8')) as {
    services: Record<string, { environment: Record<string, string> }>;
  };
  // agent_env reaches every process of the optimizer's container; the secrets stay blanked there.
  expect(compose.services.main!.environment).toMatchObject({
    BASH_MAX_TIMEOUT_MS: '1800000',
    UV_TOOL_BIN_DIR: '/home/agent/.local/bin',
    MODAL_TOKEN_ID: '',
  });
  const instruction = fs.readFileSync(path.join(out, 'instruction.md'), 'utf8');
  expect(instruction).toContain('This is a CONFORMANCE CHECK');
  // Where the optimizer finds development's task files, and what a failed case's result carries.
  expect(instruction).toContain('The task files of split(s) `development`');
  expect(instruction).toContain('`/state/agent-results/tasks/`');
  expect(instruction).toContain("a failed case's `feedback` holds the end of the evaluated agent's transcript (at most 8000 bytes");
});

test('vero build --print-config shows what a vero file became in our schema; one with refused fields names them all and exits 2', async () => {
  const file = path.join(VERO, 'examples/harness-conformance/build.yaml');
  const r = await runVero(['build', '-c', file, '--print-config', '--param', 'optimizer_model=anthropic/claude-x']);
  expect(r.code).toBe(0); // nothing of vero's harness-conformance is refused
  const printed = parseYaml(r.stdout) as Record<string, any>;
  expect(printed).toMatchObject({ mode: 'B', selection_split: 'validation', reward_mode: 'submit', submit_enabled: true });
  expect(printed.gateway.scopes.producer.models).toEqual(['anthropic/claude-x']);
  expect(r.stdout).toMatch(/^# note: harbor_requirement: harbor\[modal\]==0\.20\.0/m);
  expect(r.stderr).not.toContain('(vero format)');
  const refused = BENCH('officeqa'); // its ../tasks are made by vero's scripts
  const withRefusals = await runVero(['build', '-c', path.join(VERO, refused), '--print-config'], { WANDB_MODE: '' });
  expect(withRefusals.code).toBe(2);
  expect(withRefusals.stderr).toContain(`(vero format): task_source:`);
  const bad = await runVero(['build', '-c', file, '--print-config', '--param', 'no-equals']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--param no-equals: expected NAME=VALUE');
});

test('vero’s target as a project: a src layout imports from src/; the inner tasks’ base images this host holds are preloaded for a vero file', async () => {
  const repo = tempDir();
  fs.mkdirSync(path.join(repo, 'src', 'pkg'), { recursive: true });
  expect(agentPythonPath(repo, 'pkg.agent:A')).toEqual(['src']);
  expect(agentPythonPath(repo, 'oracle')).toBeUndefined();
  fs.mkdirSync(path.join(repo, 'pkg'));
  expect(agentPythonPath(repo, 'pkg.agent:A')).toBeUndefined(); // a root package is the checkout's root
  // Declared images are ours to load; a file of ours declares them or loads none; a vero file (which cannot
  // declare any) gets the ones this host's engine holds, and a registry serves the rest.
  // (Which images this host holds is asked of a stand-in here; test/real-harbor/vero-conformance.test.ts asks Docker.)
  const missingHere = async (images: string[]) => images.filter((i) => i !== 'python:3.12-slim');
  const inner = ['debian:trixie-slim', 'python:3.12-slim'];
  expect(await imagesToPreload(['a:1'], true, inner, missingHere)).toEqual(['a:1']);
  expect(await imagesToPreload(undefined, false, inner, missingHere)).toEqual([]);
  expect(await imagesToPreload(undefined, true, inner, missingHere)).toEqual(['python:3.12-slim']);
});
