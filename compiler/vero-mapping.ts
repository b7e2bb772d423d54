/**
 * vero's build.yaml → ours. Every vero field is either carried over with vero's meaning and default, or refused by
 * name with the reason; what is carried over with a stated difference is a note the build prints. The table in
 * docs/vero-configs.md is this file's, field by field.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  DEFAULT_HARBOR_VERSION,
  isSupportedHarborVersion,
  SUPPORTED_HARBOR_VERSIONS,
  type SupportedHarborVersion,
} from '../model/harbor/version';
import { type DatasetSource, pinDataset, type RegistryLocation, type ResolvedDataset } from '../harbor/dataset-ref';
import { splitAgentEnv } from '../model/harbor/outer-run-args';
import type { VeroBuild, VeroScope } from './vero-schema';
import { agentProject } from './vero-agent-project';
import { commandBackendErrors, toCommandMode } from './vero-command';

export interface VeroMapping {
  /** Our build.yaml, as a file would hold it (paths relative to the vero file's dir, or absolute). */
  config: Record<string, unknown>;
  /** `field: why it cannot be honoured` — the build refuses while any is left. */
  refusals: string[];
  /** `field: how it is carried over, and what differs` — printed by the build, recorded by --print-config. */
  notes: string[];
}

/** A budget for a vero partition that has none: vero's "unlimited", as a count no optimizer reaches. */
const UNLIMITED_RUNS = 1_000_000;

/** `vero build --registry-path` (resolved here) or `--registry-url` as a registry dataset's fields (none: neither). */
export const registryFields = (r: RegistryLocation) =>
  r.path ? { registry_path: path.resolve(r.path) } : r.url ? { registry_url: r.url } : {};

function mapScope(s: VeroScope, where: string, notes: string[]): Record<string, unknown> {
  if (s.max_tokens !== null)
    notes.push(
      `${where}.max_tokens: ${s.max_tokens} total tokens become max_input_tokens ${s.max_tokens} and max_output_tokens ${s.max_tokens} (the gateway meters input and output separately; a request is refused before it could overspend either)`,
    );
  return {
    models: s.allowed_models,
    aliases: s.model_aliases,
    ...(s.max_requests !== null ? { max_requests: s.max_requests } : {}),
    ...(s.max_tokens !== null ? { max_input_tokens: s.max_tokens, max_output_tokens: s.max_tokens } : {}),
    max_concurrency: s.max_concurrency,
  };
}

function mapGateway(v: VeroBuild, refusals: string[], notes: string[], env: NodeJS.ProcessEnv): Record<string, unknown> | undefined {
  const g = v.inference_gateway;
  if (!g) return undefined;
  if (!g.log_requests)
    refusals.push(
      'inference_gateway.log_requests: false is not supported (the trusted side always keeps a request log; it is never agent-visible)',
    );
  const fromEnv = g.upstream_base_url_env ? env[g.upstream_base_url_env] : undefined;
  const baseUrl = (fromEnv || g.default_upstream_base_url).replace(/\/+$/, '').replace(/\/v1$/, '');
  notes.push(
    `inference_gateway: upstream openai at ${baseUrl}${fromEnv ? ` (from ${g.upstream_base_url_env} at build time)` : ''}, key from ${g.upstream_api_key_env}`,
  );
  if (!g.finalization)
    notes.push('inference_gateway.finalization: absent, so a separate pool with the evaluation scope’s models and limits (vero’s default)');
  return {
    upstreams: { openai: { base_url: baseUrl, key_env: g.upstream_api_key_env } },
    scopes: {
      producer: mapScope(g.producer, 'inference_gateway.producer', notes),
      evaluation: mapScope(g.evaluation, 'inference_gateway.evaluation', notes),
      finalization: mapScope(g.finalization ?? g.evaluation, 'inference_gateway.finalization', []),
    },
    request_log: { max_body_bytes: g.request_log_body_bytes, attribution: g.request_log_attribution },
  };
}

/** vero's task_source as ours: a local dataset dir (`inner_task`) or a registry dataset pinned here (`inner_dataset`). */
interface MappedSource {
  innerTask?: string;
  dataset?: DatasetSource;
  resolved?: ResolvedDataset | null;
}

/**
 * The task source: a local Harbor dataset dir; a registry dataset (`name@version`, `org/name@sha256:…`), pinned
 * against the local registry `vero build --registry-path` names (else recorded for the sidecar's Harbor, noted);
 * or a refusal naming what is missing.
 */
function mapTaskSource(v: VeroBuild, baseDir: string, registry: RegistryLocation, refusals: string[], notes: string[]): MappedSource {
  const src = v.task_source;
  if (src === null) return {};
  const local = path.resolve(baseDir, src);
  if (fs.existsSync(local)) return { innerTask: local };
  if (src.includes('@')) {
    const pinned = pinDataset({ ref: src, ...registryFields(registry) });
    refusals.push(...pinned.problems.map((p) => `task_source: ${p}`));
    notes.push(...pinned.notes.map((n) => `task_source: ${n}`));
    if (pinned.resolved && !pinned.problems.length)
      notes.push(`task_source: ${src} pinned at ${pinned.source.digest} (${pinned.resolved.tasks.length} tasks)`);
    return { dataset: pinned.source, resolved: pinned.resolved }; // refused when it had problems; mapped, to be checked further
  }
  refusals.push(
    `task_source: ${local} does not exist (resolved relative to the build file; vendored task data must be fetched or generated first, e.g. by the benchmark's scripts/)`,
  );
  return {};
}

/** A registry source against vero's task_manifest: the dataset version it records, and each task's digest it records. */
function checkManifestDigests(manifest: Record<string, unknown>, source: MappedSource, refusals: string[]): void {
  const pin = source.dataset?.digest;
  const recorded = manifest.dataset_version;
  if (pin && typeof recorded === 'string' && /^sha256:/.test(recorded) && recorded !== pin)
    refusals.push(`task_manifest: digest mismatch: its dataset_version is ${recorded}, the task_source is pinned at ${pin}`);
  const byName = new Map((source.resolved?.tasks ?? []).map((t) => [t.name, t.digest]));
  const differ: string[] = [];
  for (const t of Array.isArray(manifest.tasks) ? (manifest.tasks as unknown[]) : []) {
    const { name, ref } = (typeof t === 'object' && t !== null ? t : {}) as { name?: unknown; ref?: unknown };
    const held = typeof name === 'string' ? byName.get(name) : undefined;
    if (typeof ref === 'string' && /^sha256:/.test(ref) && held !== undefined && held !== ref)
      differ.push(`${String(name)} (manifest ${ref}, registry ${held})`);
  }
  if (differ.length)
    refusals.push(
      `task_manifest: digest mismatch for ${differ.length} task(s): ${differ.slice(0, 3).join('; ')}${differ.length > 3 ? '; …' : ''}`,
    );
}

/** task_manifest: its task_source must be the build's, and every partition's tasks must be in it (vero's check). */
function checkManifest(v: VeroBuild, baseDir: string, mapped: MappedSource, refusals: string[]): void {
  if (v.task_manifest === null) return;
  const source = mapped.innerTask;
  const file = path.resolve(baseDir, v.task_manifest);
  let manifest: { task_source?: unknown; tasks?: unknown };
  try {
    manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof manifest;
  } catch (e) {
    refusals.push(`task_manifest: cannot read ${file} as JSON (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    return;
  }
  const recorded = manifest.task_source;
  const same =
    recorded === v.task_source ||
    (typeof recorded === 'string' && source !== undefined && path.resolve(path.dirname(file), recorded) === source);
  if (!same) refusals.push(`task_manifest: its task_source ${JSON.stringify(recorded)} is not the build's task_source ${v.task_source}`);
  if (mapped.dataset) checkManifestDigests(manifest, mapped, refusals);
  const names = Array.isArray(manifest.tasks)
    ? manifest.tasks.map((t: unknown) => (typeof t === 'object' && t !== null ? (t as { name?: unknown }).name : t))
    : null;
  if (!names || names.some((n) => typeof n !== 'string')) {
    refusals.push('task_manifest: tasks must be a JSON array of names or {name} objects');
    return;
  }
  const unknown = Object.values(v.partitions)
    .flat()
    .filter((t) => !names.includes(t));
  if (unknown.length) refusals.push(`partitions: tasks absent from task_manifest: ${[...new Set(unknown)].join(', ')}`);
}

/** The one target parameter vero's Harbor backend reads: the model of the trusted pass (`targets[].model` sets it too). */
const MODEL_OVERRIDE = 'harbor_model_override';

/** A target's model: `model`, else its `harbor_model_override` parameter (vero's compiler writes the one into the other). */
const targetModel = (t: VeroBuild['targets'][number]): string | undefined =>
  t.model ?? (typeof t.parameters[MODEL_OVERRIDE] === 'string' ? t.parameters[MODEL_OVERRIDE] : undefined);

/** Fields we do not implement: refused when set to anything but vero's do-nothing value. */
function refuseUnsupported(v: VeroBuild, refusals: string[]): void {
  const refuse = (field: string, reason: string) => refusals.push(`${field}: ${reason}`);
  refusals.push(...commandBackendErrors(v));
  v.agent_access.forEach((a, i) => {
    if (a.disclosure === 'none')
      refuse(`agent_access.${i}.disclosure`, '"none" (evaluate without seeing any result) has no counterpart; use full or aggregate');
  });
  v.targets.forEach((t, i) => {
    const other = Object.keys(t.parameters).filter((k) => k !== MODEL_OVERRIDE);
    if (other.length)
      refuse(
        `targets.${i}.parameters`,
        `${other.join(', ')}: vero's Harbor backend reads only ${MODEL_OVERRIDE} (the pass's model); nothing else is passed`,
      );
    if (MODEL_OVERRIDE in t.parameters && typeof t.parameters[MODEL_OVERRIDE] !== 'string')
      refuse(`targets.${i}.parameters`, `${MODEL_OVERRIDE} must be a model name`);
  });
  const selectors = [v.objective.selector, ...v.objective.constraints.map((c) => c.selector)];
  if (selectors.some((x) => x.aggregation !== 'report' || x.case_failure_value !== null))
    refuse(
      'objective',
      'a selector aggregates only as "report" (a metric of the evaluation\'s report; per-case aggregations are not supported)',
    );
  if (v.harness_user !== null && v.harness_user !== 'harness')
    refuse('harness_user', `only "harness" (the sidecar image's unprivileged user) or null is supported, not "${v.harness_user}"`);
}

/**
 * `wandb`: the sidecar's W&B run (model/compiled-task/wandb-spec.ts), with vero's fields. The mode is the file's, else W&B's own
 * WANDB_MODE in the build's environment, else online (whose WANDB_API_KEY the build then requires, as a secret);
 * disabled leaves it out, said in a note.
 */
function mapWandb(v: VeroBuild, env: NodeJS.ProcessEnv, refusals: string[], notes: string[]): Record<string, unknown> | undefined {
  const w = v.wandb;
  if (!w) return undefined;
  const mode = w.mode || env.WANDB_MODE || 'online';
  const from = w.mode ? 'wandb.mode' : env.WANDB_MODE ? 'WANDB_MODE in the build environment' : 'the default';
  if (mode === 'disabled') {
    notes.push(`wandb: disabled (${from}): nothing is reported to Weights & Biases`);
    return undefined;
  }
  if (mode !== 'online' && mode !== 'offline') {
    refusals.push(`wandb.mode: "${mode}" (${from}) is not one of online, offline, disabled`);
    return undefined;
  }
  notes.push(
    `wandb: project ${w.project}, ${mode} (${from}): the eval sidecar logs its evaluations with W&B's Python client${mode === 'offline' ? ' into a run dir on its admin volume (upload it with `wandb sync`)' : ' (WANDB_API_KEY from the build host, the sidecar only)'}`,
  );
  const optional = { entity: w.entity, name: w.name, group: w.group, notes: w.notes, run_id: w.run_id };
  const set = Object.fromEntries(Object.entries(optional).filter(([, x]) => x !== null && x !== undefined && x !== ''));
  return { project: w.project, ...set, tags: w.tags, mode, log_traces: w.log_traces };
}

/** vero's rule: every model that will be requested is allowed by its scope, or the first call is a 403. */
function checkModelScopes(v: VeroBuild, refusals: string[]): void {
  const g = v.inference_gateway;
  if (!g || v.model === null) return;
  if (!g.evaluation.allowed_models.includes(v.model))
    refusals.push(`model: ${v.model} is not in inference_gateway.evaluation.allowed_models (${g.evaluation.allowed_models.join(', ')})`);
  const fin = g.finalization ?? g.evaluation;
  if (!fin.allowed_models.includes(v.model))
    refusals.push(`model: ${v.model} is not in the finalization scope's allowed_models (${fin.allowed_models.join(', ')})`);
}

/** vero's optimizer_harbor_args: `--ae K=V` items join the optimizer's environment after agent_env (they win, as on vero's command line). */
function mapOuterArgs(v: VeroBuild, notes: string[]): { env: Record<string, string>; args: string[] } {
  const { env, rest } = splitAgentEnv(v.optimizer_harbor_args);
  if (Object.keys(env).length)
    notes.push(
      `optimizer_harbor_args: --ae ${Object.keys(env).join(', ')} become optimizer_env (the optimizer's environment, after agent_env)`,
    );
  return { env: { ...v.agent_env, ...env }, args: rest };
}

/** Flags of `extra_harbor_args` that are typed fields of ours, by the field they set (`K=V` values). */
const TYPED_PAIR_FLAGS: Record<string, 'environment_kwargs' | 'agent_kwargs' | 'agent_env'> = {
  '--ek': 'environment_kwargs',
  '--environment-kwarg': 'environment_kwargs',
  '--ak': 'agent_kwargs',
  '--agent-kwarg': 'agent_kwargs',
  '--ae': 'agent_env',
  '--agent-env': 'agent_env',
};

/** vero's extra_harbor_args: `--ek k=v` and the like become our typed fields (the same flags reach Harbor); the rest pass through. */
function splitExtraArgs(args: string[]): { typed: Record<string, Record<string, string>>; rest: string[]; errors: string[] } {
  const typed: Record<string, Record<string, string>> = {};
  const rest: string[] = [];
  const errors: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const field = TYPED_PAIR_FLAGS[flag];
    if (!field) {
      rest.push(a);
      continue;
    }
    const value = eq > 0 ? a.slice(eq + 1) : args[++i];
    const m = value === undefined ? null : /^([^=]+)=(.*)$/s.exec(value);
    if (!m) errors.push(`extra_harbor_args: ${flag} expects KEY=VALUE, got ${value === undefined ? 'nothing' : JSON.stringify(value)}`);
    else (typed[field] ??= {})[m[1]!] = m[2]!;
  }
  return { typed, rest, errors };
}

/**
 * vero's `harbor_requirement` as the sidecar's Harbor: an exact pin of a version vero-harbor supports is kept;
 * anything else (another version, a Git commit, extras) runs the default release, with a note saying so.
 */
function sidecarHarborVersion(requirement: string, notes: string[]): SupportedHarborVersion {
  const exact = /==\s*([^*\s,;]+)/.exec(requirement)?.[1];
  if (exact !== undefined && isSupportedHarborVersion(exact)) return exact;
  notes.push(
    `harbor_requirement: ${requirement} — the sidecar runs Harbor ${DEFAULT_HARBOR_VERSION} (harbor_version; vero-harbor supports ${SUPPORTED_HARBOR_VERSIONS.join(', ')})`,
  );
  return DEFAULT_HARBOR_VERSION;
}

export function fromVero(
  v: VeroBuild,
  baseDir: string,
  env: NodeJS.ProcessEnv = process.env,
  registry: RegistryLocation = {},
): VeroMapping {
  const refusals: string[] = [];
  const notes: string[] = [];
  refuseUnsupported(v, refusals);
  const wandb = mapWandb(v, env, refusals, notes);
  const source = mapTaskSource(v, baseDir, registry, refusals, notes);
  checkManifest(v, baseDir, source, refusals);

  const harborVersion = sidecarHarborVersion(v.harbor_requirement, notes);
  notes.push(
    `harbor_python_version: ${v.harbor_python_version} — the sidecar installs Harbor for its image's python3 (images.sidecar_python), from a bundled wheelhouse (default_index unused)`,
  );
  if (!v.base_image_main || !v.base_image_sidecar)
    notes.push('base_image_main/base_image_sidecar: unset, so vero-harbor’s Debian images (vero’s uv python3.12 image lacks Node.js ≥ 20)');
  if (v.infrastructure_retry_delay_seconds !== 5 || v.infrastructure_max_attempts > 1)
    notes.push(
      `infrastructure_retry_delay_seconds: ${v.infrastructure_retry_delay_seconds} — a task retried for infrastructure reasons waits vero-harbor's own back-off instead`,
    );
  if (v.feedback_max_bytes !== 3000 && !v.feedback_transcripts) notes.push('feedback_max_bytes: unused without feedback_transcripts');
  if (v.include_evals_skill)
    notes.push('include_evals_skill: the `vero` commands are documented in instruction.md and `vero --help` (no separate skill file)');
  const outer = mapOuterArgs(v, notes);

  const shared = new Set([...v.agent_access.map((a) => a.partition), v.selection_partition]);
  v.targets.forEach((t, i) => {
    if ((t.n_attempts !== null || t.aggregate_attempts !== null) && shared.has(t.partition))
      refusals.push(
        `targets.${i}: n_attempts/aggregate_attempts cannot override an agent-evaluable partition ("${t.partition}" is shared with search/selection)`,
      );
  });

  const splits = Object.keys(v.partitions).map((p) => {
    const a = v.agent_access.find((x) => x.partition === p);
    if (!a) return { split: p, access: 'no_access' };
    return {
      split: p,
      access: a.disclosure === 'full' ? 'viewable' : 'non_viewable',
      ...(a.disclosure === 'aggregate' ? { min_aggregate_cases: a.min_aggregate_cases } : {}),
      ...(a.expose_case_resources ? { expose_case_resources: true } : {}),
    };
  });
  for (const a of v.agent_access)
    if (!(a.partition in v.partitions)) refusals.push(`agent_access: partition "${a.partition}" is not in partitions`);
  const budgets = v.agent_access.map((a) => {
    if (a.total_runs === null && a.total_cases === null)
      notes.push(`agent_access.${a.partition}: no total_runs/total_cases (unlimited in vero) becomes ${UNLIMITED_RUNS} runs`);
    return {
      split: a.partition,
      ...(a.total_runs !== null ? { total_run_budget: a.total_runs } : {}),
      ...(a.total_cases !== null ? { total_sample_budget: a.total_cases } : {}),
      ...(a.total_runs === null && a.total_cases === null ? { total_run_budget: UNLIMITED_RUNS } : {}),
    };
  });

  const agentRepo = path.resolve(baseDir, v.agent_repo);
  const project = agentProject(agentRepo, v.agent_import_path, harborVersion);
  if (project.note) notes.push(project.note);
  const agentTimeoutMultiplier = v.case_timeout_seconds / v.task_agent_timeout_seconds;
  const extra = splitExtraArgs(v.extra_harbor_args);
  refusals.push(...extra.errors);
  const harbor = {
    agent: v.agent_import_path ?? 'oracle',
    ...(project.pythonPath ? { python_path: project.pythonPath } : {}),
    ...(v.model !== null ? { model: v.model } : {}),
    environment: v.environment_name,
    n_attempts: v.n_attempts,
    max_retries: v.max_retries,
    retry_wait_multiplier: v.retry_wait_multiplier,
    retry_min_wait_sec: v.retry_min_wait_seconds,
    retry_max_wait_sec: v.retry_max_wait_seconds,
    ...(agentTimeoutMultiplier !== 1 ? { agent_timeout_multiplier: agentTimeoutMultiplier } : {}),
    env: v.task_environment,
    ...extra.typed,
    extra_args: extra.rest,
  };
  const gateway = mapGateway(v, refusals, notes, env);
  checkModelScopes(v, refusals);
  // Attempts and runs above 10 are lowered to 10 (our schemas' limit), said in a note.
  const atMost10 = (field: string, n: number) => {
    if (n > 10) notes.push(`${field}: ${n} lowered to 10, the most vero-harbor makes`);
    return Math.min(n, 10);
  };
  const taskAttempts = atMost10('infrastructure_max_attempts', v.infrastructure_max_attempts);

  const config: Record<string, unknown> = {
    name: v.name,
    description: v.description,
    agent_repo: agentRepo,
    mode: 'B',
    harbor,
    harbor_version: harborVersion,
    ...(project.packages.length ? { harbor_packages: project.packages } : {}),
    ...(source.innerTask ? { inner_task: source.innerTask } : {}),
    ...(source.dataset ? { inner_dataset: source.dataset } : {}),
    partition: v.partitions,
    scoring: {
      aggregate: v.aggregate_attempts,
      reward_key: v.reward_key,
      agent_task_attempts: taskAttempts,
      trusted_task_attempts: taskAttempts,
      error_rate_threshold: v.error_rate_threshold ?? 1,
    },
    objective: mappedObjective(v),
    splits,
    budgets,
    reward_mode: v.reward_mode,
    submit_enabled: v.reward_mode === 'submit',
    selection_split: v.selection_partition,
    auto_best_k: v.rescore_top_k,
    ...(v.rescore_attempts !== 1 ? { rescore_attempts: atMost10('rescore_attempts', v.rescore_attempts) } : {}),
    min_selection_coverage: v.selection_coverage_threshold,
    baseline_floor: v.baseline_floor,
    ...(v.baseline_selection_score !== null ? { baseline_selection_score: v.baseline_selection_score } : {}),
    score_baseline: v.score_baseline,
    targets: v.targets.map((t, i) => ({
      split: t.partition,
      reward_key: t.reward_key,
      failure_value: t.failure_value,
      ...(t.baseline_reward !== null ? { baseline_reward: t.baseline_reward } : {}),
      ...(t.n_attempts !== null ? { n_attempts: t.n_attempts } : {}),
      ...(t.aggregate_attempts !== null ? { aggregate: t.aggregate_attempts } : {}),
      ...(targetModel(t) !== undefined ? { model: targetModel(t) } : {}),
      ...(t.max_attempts !== 1 ? { max_attempts: atMost10(`targets.${i}.max_attempts`, t.max_attempts) } : {}),
    })),
    ...(v.feedback_transcripts || v.expose_attempt_detail
      ? { feedback: { transcripts: v.feedback_transcripts, max_bytes: v.feedback_max_bytes, attempt_detail: v.expose_attempt_detail } }
      : {}),
    ...workspaceFields(v, baseDir),
    secrets: v.secrets,
    ...(gateway ? { gateway } : {}),
    ...(wandb ? { wandb } : {}),
    ...(v.base_image_main && v.base_image_sidecar ? { images: { main: v.base_image_main, sidecar: v.base_image_sidecar } } : {}),
    timeout: v.timeout_seconds,
    ...(v.evaluation_drain_timeout_seconds !== null ? { drain_timeout: v.evaluation_drain_timeout_seconds } : {}),
    max_concurrency: v.max_concurrency,
    verifier_timeout: v.verifier_timeout_seconds ?? Math.max(1, Math.floor(v.timeout_seconds)),
    build_timeout: v.build_timeout_seconds,
    optimizer_env: outer.env,
    optimizer_harbor_args: outer.args,
    harness_user: v.harness_user === null ? null : 'harness',
    task_services_use_upstream: v.task_services_use_upstream,
  };
  return {
    config: v.command_backend && v.evaluation_backend === 'command' ? toCommandMode(v, baseDir, config, notes) : config,
    refusals,
    notes,
  };
}

/** The optimizer's workspace and what it is told: read-only paths, overlays (sources from the file's dir), the instruction's settings. */
function workspaceFields(v: VeroBuild, baseDir: string): Record<string, unknown> {
  return {
    read_only_paths: v.read_only_paths,
    workspace_overlays: v.workspace_overlays.map((o) => ({ source: path.resolve(baseDir, o.source), dest: o.dest })),
    instruction: {
      ...(v.instruction_template !== null ? { template: path.resolve(baseDir, v.instruction_template) } : {}),
      multifidelity: v.instruct_multifidelity,
      exhaust_budget: v.instruct_exhaust_budget,
      evaluation_set_name: v.evaluation_set_name,
      disclose_budget: v.disclose_budget,
    },
  };
}

/** vero's objective: its selector's metric, direction, failure value and constraints (each `metric operator value`). */
function mappedObjective(v: VeroBuild): Record<string, unknown> {
  const o = v.objective;
  return {
    direction: o.direction,
    ...(o.failure_value !== null ? { failure_value: o.failure_value } : {}),
    metric: o.selector.metric,
    ...(o.constraints.length
      ? { constraints: o.constraints.map((c) => ({ metric: c.selector.metric, operator: c.operator, value: c.value })) }
      : {}),
  };
}
