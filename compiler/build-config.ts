/**
 * `build.yaml`: one zod schema, strict (unknown keys are errors naming their path), relative paths resolved
 * against the file, and every cross-field rule checked before anything is written.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { isInside, MAX_CONFIG_BYTES, readRegularText } from '../infra/bounded-read';
import { commandArgv } from '../model/command-line';
import { DurationSeconds } from '../model/durations';
import { formatZodIssues } from '../model/config-issues';
import { ConfigError } from '../model/errors';
import { GatewaySpec, upstreamKeyEnvs } from '../model/gateway/policy';
import { outerRunArgErrors } from '../model/harbor/outer-run-args';
import { HarborSection, usesLocalDocker } from '../model/harbor/config';
import { requirementName } from '../model/compiled-task/python-requirement';
import { DEFAULT_HARBOR_VERSION, SUPPORTED_HARBOR_VERSIONS } from '../model/harbor/version';
import {
  BudgetSpec,
  DEFAULT_SCORING,
  FeedbackSpec,
  ObjectiveSpec,
  ScoringSpec,
  SplitName,
  SplitSpec,
  TargetSpec,
} from '../model/compiled-task/serve-config';
import { availableTasks } from '../harbor/task-source';
import { HARNESS_PLACEHOLDERS, unknownPlaceholders } from '../model/compiled-task/command-harness';
import { pinDataset, type RegistryLocation, type ResolvedDataset, SHA256_DIGEST } from '../harbor/dataset-ref';
import { BuildParams, parseWithPositions, substituteParams } from './build-params';
import { fromVero, registryFields } from './vero-mapping';
import { WandbSpec } from '../model/compiled-task/wandb-spec';
import { sidecarKeyEnvs } from '../model/compiled-task/sidecar-keys';
import { isVeroFormat, VeroBuildFile } from './vero-schema';

/** A relative path that stays inside its root: no absolute paths, no `..`, no empty or control characters. */
const SafeRelativePath = z
  .string()
  .min(1)
  .refine((p) => !path.isAbsolute(p) && !p.split(/[/\\]/).includes('..') && !/[\0\n\r]/.test(p) && path.normalize(p) !== '.', {
    message: 'expected a relative path inside the agent repo (no leading /, no .., no newlines)',
  });

const DEFAULT_IMAGE = 'debian:trixie-slim';

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');
const argv = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((c) => commandArgv(c));

export const BuildConfigFile = z.strictObject({
  /** Harbor task name `org/name`. */
  name: z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*\/[a-zA-Z0-9][a-zA-Z0-9._-]*$/, 'expected org/name (letters, digits, . _ -)'),
  description: z.string().default(''),
  /** The repo (or a subdirectory of one) the optimizer edits; its committed HEAD is the baseline. */
  agent_repo: z.string().min(1),
  /** The commit of agent_repo that is the baseline (a sha, tag or branch); default its committed HEAD. */
  agent_ref: z
    .string()
    .regex(/^[^-\s][^\s]*$/, 'expected a commit, tag or branch name')
    .default('HEAD'),
  mode: z.enum(['A', 'B']),
  // Mode B: Harbor scores.
  harbor: HarborSection.optional(),
  /**
   * The Harbor release the sidecar runs (Mode B's evaluations and the verifier's scoring), installed into its image
   * from an offline wheelhouse (scripts/ensure-harbor-wheelhouse): one vero-harbor supports.
   */
  harbor_version: z
    .enum(SUPPORTED_HARBOR_VERSIONS, {
      error: (iss) =>
        `expected a Harbor version vero-harbor supports (${SUPPORTED_HARBOR_VERSIONS.join(', ')}), got ${JSON.stringify(iss.input)}`,
    })
    .default(DEFAULT_HARBOR_VERSION),
  /**
   * Python requirements (PEP 508, e.g. `openai==2.46.0`) installed beside Harbor in the sidecar's Harbor environment,
   * for the candidate agent's imports: resolved together with harbor_version and downloaded as wheels when the task
   * is built (from pip's index), installed without network in the image. Harbor itself is harbor_version.
   */
  harbor_packages: z
    .array(
      z
        .string()
        .regex(/^[A-Za-z0-9][^\n\r]*$/, 'expected a requirement such as "openai==2.46.0" (no pip options)')
        .refine((r) => requirementName(r) !== 'harbor', 'Harbor itself is harbor_version'),
    )
    .default([]),
  /** A local Harbor dataset dir (or task dir), baked into the sidecar only. */
  inner_task: z.string().min(1).optional(),
  /**
   * Or a Harbor registry dataset (docs/vero-configs.md "Registry task sources"): `ref` as `harbor run -d` takes it
   * (`name@version`, `org/name@sha256:…`), the legacy registry's `registry_path` (a local registry.json, relative
   * to this file) or `registry_url`, and the `digest` that pins it (recorded by the build; a given one is verified).
   */
  inner_dataset: z
    .strictObject({
      ref: z.string().min(1),
      registry_path: z.string().min(1).optional(),
      registry_url: z
        .string()
        .regex(/^https?:\/\//, 'expected an http(s) URL')
        .optional(),
      digest: z.string().regex(SHA256_DIGEST, 'expected sha256:<64 hex digits>').optional(),
    })
    .optional(),
  partition: z.record(SplitName, z.array(z.string().min(1)).min(1)).optional(),
  /** Mode B: how tasks are scored, and how often the agent's and the verifier's evaluations retry a dead task. */
  scoring: ScoringSpec.default(DEFAULT_SCORING),
  /** Maximise (default) or minimise the score; minimised scores are negated into the reward. */
  objective: ObjectiveSpec.default({ direction: 'maximize' }),
  // Mode A: a trusted scorer scores the candidate's inference.
  /** A dir with `<split>.jsonl` files; rows `{"id"?, "inputs": {...}, "labels": {...}}`. */
  dataset: z.string().min(1).optional(),
  /** The candidate's inference, run in its worktree: reads inputs JSONL on stdin, writes outputs JSONL. */
  inference: z.strictObject({ command: argv }).optional(),
  /** The trusted scorer, baked into the sidecar only (never taken from the agent's repo). */
  scorer: z.strictObject({ dir: z.string().min(1), command: argv }).optional(),
  /**
   * Instead of dataset, inference and scorer: a command harness (vero's command backend), baked into the sidecar,
   * that scores the candidate's workspace and writes a report of metrics; `partition` names each split's cases.
   */
  harness: z
    .strictObject({
      dir: z.string().min(1),
      command: z.array(z.string().min(1)).min(1),
      working_directory: z.string().default('.'),
      env: z.record(envName, z.string()).default({}),
      passthrough_env: z.array(envName).default([]),
    })
    .optional(),
  splits: z.array(SplitSpec).min(1),
  budgets: z.array(BudgetSpec).default([]),
  reward_mode: z.enum(['submit', 'auto_best']).default('auto_best'),
  selection_split: SplitName.default('validation'),
  /** auto_best re-scores this many top candidates on the trusted side. */
  auto_best_k: z.number().int().min(1).max(20).default(3),
  /**
   * How many times each trusted re-score of auto_best (a shortlisted candidate on the selection split, the seed
   * for the baseline floor) runs, each a run of its own, while it cannot score for infrastructure reasons (default 1).
   */
  rescore_attempts: z.number().int().min(1).max(10).optional(),
  /**
   * Mode B: race the shortlist on the selection split instead of scoring each on all of it (docs/race.md): a
   * candidate stops costing trials once it is worse than the leader at `confidence`; `margin` stops the race when
   * the rest are that close.
   */
  auto_best_race: z
    .strictObject({ confidence: z.number().gt(0.5).lt(1).default(0.95), margin: z.number().min(0).max(1).default(0) })
    .optional(),
  /**
   * The optimizer's own evaluations stop once an anytime-valid sequence says the candidate cannot beat the
   * incumbent (the best evaluation so far of the same cases) by `margin` at `confidence` (docs/race.md); unrun
   * cases are refunded. `running`: `finish` runs cases in waves of max_concurrency (a wave started is paid),
   * `stop` one case at a time (nothing runs past a decision). Off when absent.
   */
  eval_early_stop: z
    .strictObject({
      confidence: z.number().gt(0.5).lt(1).default(0.95),
      margin: z.number().min(0).max(1).default(0),
      running: z.enum(['stop', 'finish']).default('finish'),
    })
    .optional(),
  /** auto_best shortlists only evaluations that covered at least this share of the selection split. */
  min_selection_coverage: z.number().min(0).max(1).default(0.9),
  /** Never reward less than the baseline's trusted score (auto_best falls back to it). */
  baseline_floor: z.boolean().default(false),
  /** The seed's pinned score on the selection split (from repeated runs): the floor compares with it, unscored. */
  baseline_selection_score: z.number().finite().optional(),
  /** Also score the seed on every target without a pinned `baseline_reward`, reported next to the reward. */
  score_baseline: z.boolean().default(false),
  targets: z.array(TargetSpec).min(1),
  submit_enabled: z.boolean().default(false),
  /**
   * Mode B: in a viewable split's per-case results, a failed case's agent transcript (redacted, capped) and each
   * trial's reward and exception (docs/sidecar.md).
   */
  feedback: FeedbackSpec.optional(),
  /** Files, dirs or globs (`tests/**`) a candidate may not change; enforced by the sidecar on commits. */
  read_only_paths: z.array(SafeRelativePath.refine((p) => !p.startsWith('!'), 'negated globs are not supported')).default([]),
  /**
   * Files copied into the optimizer's workspace when it starts (vero's workspace_overlays): a dir's contents land
   * under `dest`, a file as `dest/<name>`; a `dest` other than the root is left out of the candidate's commits.
   */
  workspace_overlays: z
    .array(
      z.strictObject({
        source: z.string().min(1),
        dest: z
          .string()
          .regex(/^[A-Za-z0-9_.-][A-Za-z0-9_./-]*$/, 'expected "." or a relative path of letters, digits, _ . / -')
          .refine((d) => !d.split('/').includes('..') && (d === '.' || !d.split('/').includes('.')), 'must stay within the workspace')
          .default('.'),
      }),
    )
    .default([]),
  secrets: z.array(envName).default([]),
  /** Weights & Biases reporting by the sidecar (model/compiled-task/wandb-spec.ts; docs/vero-configs.md). */
  wandb: WandbSpec.optional(),
  /**
   * The inference gateway: the sidecar alone holds the upstream keys; the optimizer, the agent's evaluations and
   * the verifier's call models through it with scoped, metered tokens (docs/gateway.md).
   */
  gateway: GatewaySpec.optional(),
  /**
   * Base images (Debian 13 or another Debian with Node.js >= 20.19 and Python >= 3.12 in its archive): what the
   * Dockerfiles need is installed with apt when missing. scripts/ensure-docker provides offline ones here.
   */
  images: z
    .strictObject({
      main: z.string().min(1).default(DEFAULT_IMAGE),
      sidecar: z.string().min(1).default(DEFAULT_IMAGE),
      /** The sidecar image's python3 (Mode B installs Harbor into it from a wheelhouse for this version). */
      sidecar_python: z
        .string()
        .regex(/^3\.\d+$/, 'expected a Python version such as "3.13"')
        .default('3.13'),
    })
    .default({ main: DEFAULT_IMAGE, sidecar: DEFAULT_IMAGE, sidecar_python: '3.13' }),
  /**
   * Mode B with the nested `harbor.environment` docker (Harbor's default): the sidecar runs its own Docker
   * engine, and these images are loaded into it at start (the inner tasks' FROM images; no registry needed).
   */
  nested_docker: z.strictObject({ preload_images: z.array(z.string().min(1)).default([]) }).optional(),
  /** Verifier timeout (finalize) and the limit of one evaluation. */
  timeout: DurationSeconds.default(1800),
  /** How long finalize waits for the optimizer's evaluations still running before it cancels them. */
  drain_timeout: DurationSeconds.default(600),
  /** The optimizer's own time limit ([agent].timeout_sec); none by default. */
  agent_timeout: DurationSeconds.optional(),
  max_concurrency: z.number().int().min(1).max(256).default(8),
  /** The verifier's own time limit (task.toml [verifier].timeout_sec); default finalize's computed worst case. */
  verifier_timeout: DurationSeconds.optional(),
  /** How long Harbor may take to build and start the task's containers ([environment].build_timeout_sec). */
  build_timeout: DurationSeconds.default(1800),
  /** Environment of the optimizer's container (`main`): every process of the optimizer sees it, as with `--ae`. */
  optimizer_env: z.record(envName, z.string()).default({}),
  /**
   * Flags for the outer `harbor run -p <task>` that hosts the optimizer (e.g. `--agent-setup-timeout-multiplier 4`),
   * checked against the flags `harbor run` accepts: `vero run` applies them before the caller's `--` arguments.
   */
  optimizer_harbor_args: z.array(z.string().min(1)).default([]),
  /**
   * The OS user the candidate's harness runs as in the sidecar. null turns that isolation off: a trust decision
   * (candidate code can then read the sidecar's secrets and held-out state), printed by the build and recorded
   * with the reward.
   */
  harness_user: z.literal('harness').nullable().default('harness'),
  /**
   * Mode B: task-owned model services (user simulators, graders) get the real OpenAI upstream as OPENAI_API_KEY /
   * OPENAI_BASE_URL; the candidate's own calls stay on the gateway as VERO_AGENT_INFERENCE_API_KEY / _BASE_URL.
   * Needs an openai gateway upstream and harness_user: null (uid isolation does not hide a process's environment).
   */
  task_services_use_upstream: z.boolean().default(false),
  /** instruction.md: a Jinja template (nunjucks) that may `{% extends "instruction.md.j2" %}`, and its options. */
  instruction: z
    .strictObject({
      template: z.string().min(1).optional(),
      /** vero's disclose_budget: false hides the remaining budget from the optimizer (`vero budget`, evaluations, this text); it is still enforced. */
      disclose_budget: z.boolean().default(true),
      /** Tell the optimizer it allocates its own sample budget and may evaluate subsets. */
      multifidelity: z.boolean().default(false),
      /** Tell the optimizer that unspent budget is wasted. */
      exhaust_budget: z.boolean().default(false),
      /** A label templates may show (vero's evaluation set name). */
      evaluation_set_name: z.string().min(1).default('harbor'),
    })
    .default({ multifidelity: false, exhaust_budget: false, evaluation_set_name: 'harbor', disclose_budget: true }),
});
export type BuildConfig = z.infer<typeof BuildConfigFile> & {
  file: string;
  baseDir: string;
  /** Which format the file was written in (vero's is mapped to ours). */
  format: 'vero-harbor' | 'vero';
  /** What the build carried over with a stated difference (vero's format): printed, never silent. */
  notes: string[];
  /** inner_dataset as a local registry resolved it at build time (its tasks, to check names and bake); null: not resolved. */
  resolvedDataset?: ResolvedDataset | null;
};

function crossFieldErrors(c: z.infer<typeof BuildConfigFile>): string[] {
  const errs: string[] = [];
  const declared = new Map(c.splits.map((s) => [s.split, s.access]));
  const dup = c.splits.map((s) => s.split).filter((s, i, a) => a.indexOf(s) !== i);
  if (dup.length) errs.push(`splits: ${[...new Set(dup)].join(', ')} declared more than once`);
  const mustBeDeclared = (where: string, split: string) => {
    if (!declared.has(split))
      errs.push(`${where}: split "${split}" is not declared in splits (declared: ${[...declared.keys()].join(', ')})`);
  };
  c.splits.forEach((s, i) => {
    if (s.access !== 'non_viewable' && s.min_aggregate_cases !== 5 && s.min_aggregate_cases !== undefined)
      errs.push(`splits.${i}.min_aggregate_cases: only for a non_viewable split ("${s.split}" is ${s.access})`);
    if (s.expose_case_resources && s.access === 'no_access')
      errs.push(`splits.${i}.expose_case_resources: "${s.split}" is no_access; a hidden split's tasks are never shown`);
    if (s.expose_case_resources && c.mode !== 'B') errs.push(`splits.${i}.expose_case_resources: only in mode B (Harbor task dirs)`);
  });
  c.budgets.forEach((b, i) => {
    mustBeDeclared(`budgets.${i}.split`, b.split);
    if (declared.get(b.split) === 'no_access')
      errs.push(`budgets.${i}.split: "${b.split}" is no_access; a budget would let the agent evaluate a hidden split`);
  });
  c.targets.forEach((t, i) => mustBeDeclared(`targets.${i}.split`, t.split));
  c.targets.forEach((t, i) => {
    for (const k of ['n_attempts', 'metric', 'aggregate', 'model'] as const)
      if (t[k] !== undefined && c.mode === 'A') errs.push(`targets.${i}.${k}: only in mode B (mode A's scorer scores each row once)`);
    // The trusted scoring calls models with the verifier's token: a model its scope refuses would fail every call.
    const fin = c.gateway?.scopes.finalization;
    if (t.model !== undefined && c.gateway && !(fin && (fin.models.includes(t.model) || t.model in fin.aliases)))
      errs.push(`targets.${i}.model: ${t.model} is not allowed by gateway.scopes.finalization (${fin?.models.join(', ') || 'no models'})`);
  });
  const keys = c.targets.map((t) => t.reward_key);
  if (new Set(keys).size !== keys.length) errs.push('targets: reward_key values must be unique (one reward per target)');
  mustBeDeclared('selection_split', c.selection_split);
  if (declared.get(c.selection_split) === 'no_access')
    errs.push(`selection_split: "${c.selection_split}" is no_access; it must be a split the agent can evaluate`);
  if (c.secrets.length !== new Set(c.secrets).size) errs.push('secrets: names must be unique');
  for (const k of upstreamKeyEnvs(c.gateway))
    if (c.secrets.includes(k))
      errs.push(
        `secrets: ${k} is the gateway's upstream key; listed in secrets it would reach candidate code raw (remove it from secrets)`,
      );
  if (c.gateway && c.gateway.port === 8000) errs.push('gateway.port: 8000 is the eval sidecar API; choose another port');
  for (const k of Object.keys(c.optimizer_env))
    if (c.secrets.includes(k) || sidecarKeyEnvs(c).includes(k) || k.startsWith('VERO_'))
      errs.push(`optimizer_env.${k}: a secret, a gateway key or a VERO_ variable; the optimizer's container sets those itself`);
  for (const e of outerRunArgErrors(c.optimizer_harbor_args, false)) errs.push(`optimizer_harbor_args: ${e}`);
  if (c.task_services_use_upstream) {
    if (!c.gateway?.upstreams.openai)
      errs.push('task_services_use_upstream: needs a gateway with an openai upstream (the credential task services are given)');
    if (c.harness_user !== null)
      errs.push(
        'task_services_use_upstream: needs harness_user: null (the upstream key would reach the isolated harness through its environment anyway)',
      );
    if (c.mode !== 'B') errs.push('task_services_use_upstream: only in mode B (task services run in Harbor tasks)');
  }
  if (c.submit_enabled === false && c.reward_mode === 'submit') errs.push('reward_mode: submit needs submit_enabled: true');
  if (c.objective.direction === 'minimize' && c.objective.failure_value === undefined)
    errs.push('objective.failure_value: required to minimise (what a failed case and "no candidate" count as: the worst score, never 0)');
  if (c.feedback && c.mode !== 'B') errs.push('feedback: only in mode B (transcripts and trials of Harbor runs)');
  if (c.auto_best_race && c.mode !== 'B')
    errs.push('auto_best_race: only in mode B (a race runs Harbor tasks; mode A scores samples with the trusted scorer)');
  if (c.auto_best_race && c.objective.direction === 'minimize')
    errs.push('auto_best_race: a race ranks rewards in [0, 1] with the highest first; not available with objective.direction: minimize');
  if (c.baseline_selection_score !== undefined && !c.baseline_floor)
    errs.push('baseline_selection_score: only used by the baseline floor (set baseline_floor: true, or remove it)');
  errs.push(...objectiveErrors(c), ...modeErrors(c, declared, mustBeDeclared));
  return errs;
}

/** What each mode requires and refuses: mode B's Harbor tasks, mode A's scorer, or its command harness. */
function modeErrors(
  c: z.infer<typeof BuildConfigFile>,
  declared: Map<string, string>,
  mustBeDeclared: (where: string, split: string) => void,
): string[] {
  const errs: string[] = [];
  if (c.wandb && c.mode !== 'B')
    errs.push(
      'wandb: only in mode B (its client is installed beside the sidecar’s Harbor): set wandb.mode: disabled or WANDB_MODE=disabled',
    );
  if (c.mode === 'A' && c.harness) errs.push(...harnessErrors(c, mustBeDeclared));
  else if (c.mode === 'B') {
    if (c.harness) errs.push('harness: only valid in mode A');
    for (const k of ['harbor', 'partition'] as const) if (c[k] === undefined) errs.push(`${k}: required in mode B`);
    if ((c.inner_task === undefined) === (c.inner_dataset === undefined))
      errs.push('inner_task: required in mode B: a local task or dataset dir, or else inner_dataset (a registry dataset), not both');
    for (const k of ['dataset', 'inference', 'scorer'] as const) if (c[k] !== undefined) errs.push(`${k}: only valid in mode A`);
    for (const split of Object.keys(c.partition ?? {})) mustBeDeclared(`partition.${split}`, split);
    for (const s of declared.keys()) if (c.partition && !c.partition[s]) errs.push(`partition: declared split "${s}" has no tasks`);
    if (c.nested_docker && !usesLocalDocker(c.harbor?.environment))
      errs.push(`nested_docker: only for the nested environment docker (harbor.environment is "${c.harbor?.environment}")`);
  } else {
    for (const k of ['dataset', 'inference', 'scorer'] as const) if (c[k] === undefined) errs.push(`${k}: required in mode A`);
    for (const k of ['harbor', 'inner_task', 'inner_dataset', 'partition', 'nested_docker'] as const)
      if (c[k] !== undefined) errs.push(`${k}: only valid in mode B`);
    if (c.harbor_packages.length) errs.push('harbor_packages: only valid in mode B (the sidecar has Harbor there)');
  }
  return errs;
}

/** The metrics an evaluation reports without a harness (vero's names): the mean, the unscored share, the spread. */
const AGGREGATE_METRICS = ['score', 'error_rate', 'score_stddev'];

/** objective.metric and constraints name metrics the evaluation reports (any of a harness's report). */
function objectiveErrors(c: z.infer<typeof BuildConfigFile>): string[] {
  const errs: string[] = [];
  if (c.auto_best_race && c.objective.constraints?.length)
    errs.push('objective.constraints: a race (auto_best_race) ranks by the score alone and checks no constraint');
  if (c.mode === 'A' && c.harness) return errs;
  if (c.objective.metric !== undefined && c.objective.metric !== 'score')
    errs.push(`objective.metric: "${c.objective.metric}": only "score" ranks without a command harness (its mean)`);
  (c.objective.constraints ?? []).forEach((k, i) => {
    if (!AGGREGATE_METRICS.includes(k.metric))
      errs.push(`objective.constraints.${i}.metric: "${k.metric}" is not reported here (expected one of ${AGGREGATE_METRICS.join(', ')})`);
  });
  return errs;
}

/**
 * Mode A with a command harness: its cases by `partition`, no dataset, inference or scorer, vero's placeholders only;
 * no eval_early_stop (the sidecar runs the cases a few at a time, so a case's score must be its own).
 */
function harnessErrors(c: z.infer<typeof BuildConfigFile>, mustBeDeclared: (where: string, split: string) => void): string[] {
  const errs: string[] = [];
  for (const k of ['dataset', 'inference', 'scorer', 'harbor', 'inner_task', 'inner_dataset', 'nested_docker'] as const)
    if (c[k] !== undefined) errs.push(`${k}: not valid with harness (the harness scores the candidate's workspace)`);
  if (c.harbor_packages.length) errs.push('harbor_packages: only valid in mode B (the sidecar has Harbor there)');
  if (!c.partition) errs.push('partition: required with harness (the case names of each split)');
  for (const split of Object.keys(c.partition ?? {})) mustBeDeclared(`partition.${split}`, split);
  for (const s of c.splits) if (c.partition && !c.partition[s.split]) errs.push(`partition: declared split "${s.split}" has no cases`);
  const unknown = unknownPlaceholders(c.harness!.command);
  if (unknown.length)
    errs.push(
      `harness.command: unknown placeholder(s) ${unknown.map((p) => `{${p}}`).join(', ')} (known: {${HARNESS_PLACEHOLDERS.join('}, {')}})`,
    );
  const wd = c.harness!.working_directory;
  if (path.isAbsolute(wd) || wd.split(/[\\/]/).includes('..')) errs.push('harness.working_directory: must stay within harness.dir');
  const overlap = c.harness!.passthrough_env.filter((n) => n in c.harness!.env);
  if (overlap.length) errs.push(`harness: env and passthrough_env both name ${overlap.join(', ')}`);
  errs.push(...harnessPassthroughErrors(c));
  if (c.eval_early_stop)
    errs.push('eval_early_stop: not with a command harness (one harness run scores every case; early stop runs cases in waves)');
  return errs;
}

/**
 * The sidecar's own secrets never reach a harness (and the candidate code it runs, as the same user): not the
 * gateway's upstream keys (the candidate would call the provider unmetered), not W&B's key, not the sidecar's VERO_
 * variables.
 */
function harnessPassthroughErrors(c: z.infer<typeof BuildConfigFile>): string[] {
  const keys = sidecarKeyEnvs(c);
  return c
    .harness!.passthrough_env.filter((n) => keys.includes(n) || n.startsWith('VERO_'))
    .map((n) =>
      keys.includes(n)
        ? `harness.passthrough_env: ${n} is one of the sidecar's own keys (the gateway's upstream or W&B's); passed to the harness it would reach candidate code raw (remove it)`
        : `harness.passthrough_env: ${n} is one of the sidecar's own VERO_ variables; it is never passed to a harness (remove it)`,
    );
}

/** The trust decisions a build made, as the build prints them (both formats): what candidate code is exposed to. */
export function trustNotes(c: z.infer<typeof BuildConfigFile>): string[] {
  const notes: string[] = [];
  if (c.harness_user === null) {
    const secrets = [...new Set([...c.secrets, ...sidecarKeyEnvs(c)])];
    notes.push(
      `harness_user: null — candidate code runs WITHOUT harness isolation, as the sidecar's own user: it can read the sidecar's secrets (${secrets.join(', ') || 'none declared'}), the gateway's tokens and the held-out splits' state; finalize records the reward as produced without isolation`,
    );
  }
  if (c.task_services_use_upstream) {
    const up = c.gateway?.upstreams.openai;
    notes.push(
      `task_services_use_upstream: the nested harbor run (task services and candidate code alike) gets the raw upstream key ${up?.key_env ?? '?'} as OPENAI_API_KEY and ${up?.base_url ?? '?'}/v1 as OPENAI_BASE_URL/OPENAI_API_BASE: calls made with it bypass the gateway (no allow-list, no metering, no request log); the candidate's metered gateway is VERO_AGENT_INFERENCE_API_KEY / VERO_AGENT_INFERENCE_BASE_URL`,
    );
  }
  return notes;
}

/** build.yaml's document after `${PARAM}`s, in our schema: a vero file is mapped (its notes kept). */
export function readBuildDocument(
  file: string,
  params: BuildParams = {},
  env: NodeJS.ProcessEnv = process.env,
  registry: RegistryLocation = {},
): { raw: unknown; format: BuildConfig['format']; notes: string[]; refusals: string[] } {
  let text: string;
  try {
    text = readRegularText(file, { maxBytes: MAX_CONFIG_BYTES });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new ConfigError(err.code ? `${file}: cannot read the build config (${err.code})` : `${file}: ${err.message}`);
  }
  const parsedDoc = parseWithPositions(text);
  if (parsedDoc.doc.errors.length) throw new ConfigError(`${file}: not valid YAML: ${parsedDoc.doc.errors[0]!.message.split('\n')[0]}`);
  const paramErrors = substituteParams(parsedDoc, file, params, env);
  if (paramErrors.length) throw new ConfigError(paramErrors.join('\n'));
  const raw: unknown = parsedDoc.doc.toJS() ?? {};
  if (!isVeroFormat(raw)) return { raw, format: 'vero-harbor', notes: [], refusals: [] };
  const baseDir = path.dirname(path.resolve(file));
  const expanded = expandPartitionFiles(raw, baseDir, file);
  const vero = VeroBuildFile.safeParse(expanded);
  if (!vero.success) throw new ConfigError(formatZodIssues(vero.error.issues, `${file} (vero format)`, VeroBuildFile));
  const mapped = fromVero(vero.data, baseDir, env, registry);
  return { raw: mapped.config, format: 'vero', notes: mapped.notes, refusals: mapped.refusals.map((r) => `${file} (vero format): ${r}`) };
}

/** vero's `partition_files: {name: file.json}` shorthand, read into `partitions` (files relative to the build file). */
function expandPartitionFiles(raw: Record<string, unknown>, baseDir: string, file: string): Record<string, unknown> {
  const { partition_files: files, ...rest } = raw;
  if (files === undefined) return raw;
  const where = `${file} (vero format): partition_files`;
  if ('partitions' in raw) throw new ConfigError(`${where}: use either partitions or partition_files, not both`);
  if (typeof files !== 'object' || files === null || !Object.keys(files).length)
    throw new ConfigError(`${where}: expected a non-empty map of partition name to JSON file`);
  const partitions: Record<string, unknown> = {};
  const errs: string[] = [];
  for (const [name, f] of Object.entries(files)) {
    if (typeof f !== 'string') {
      errs.push(`${where}.${name}: expected a file name`);
      continue;
    }
    const p = path.resolve(baseDir, f);
    try {
      const tasks: unknown = JSON.parse(fs.readFileSync(p, 'utf8'));
      if (!Array.isArray(tasks) || tasks.some((t) => typeof t !== 'string'))
        errs.push(`${where}.${name}: ${p} must be a JSON array of task names`);
      else partitions[name] = tasks;
    } catch (e) {
      errs.push(`${where}.${name}: cannot read ${p} as JSON (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }
  if (errs.length) throw new ConfigError(errs.join('\n'));
  return { ...rest, partitions };
}

/** inner_dataset with its registry file resolved against the build file, or `vero build --registry-path/--registry-url`'s. */
function datasetWithRegistry(
  d: NonNullable<z.infer<typeof BuildConfigFile>['inner_dataset']>,
  baseDir: string,
  registry: RegistryLocation,
): NonNullable<BuildConfig['inner_dataset']> {
  if (d.registry_path !== undefined) return { ...d, registry_path: path.resolve(baseDir, d.registry_path) };
  if (d.registry_url !== undefined) return d;
  return { ...d, ...registryFields(registry) };
}

/** Mode A's trusted inputs: the harness dir, or the dataset (a file per split) and the scorer dir. */
function modeASourceErrors(cfg: BuildConfig): string[] {
  if (cfg.harness) return trustedDirErrors('harness.dir', cfg.harness.dir, cfg.agent_repo);
  const errs: string[] = [];
  if (!fs.existsSync(cfg.dataset!)) errs.push(`dataset: ${cfg.dataset} does not exist`);
  else
    for (const s of cfg.splits)
      if (!fs.existsSync(path.join(cfg.dataset!, `${s.split}.jsonl`)))
        errs.push(`dataset: no ${s.split}.jsonl in ${cfg.dataset} for declared split "${s.split}"`);
  if (!fs.existsSync(cfg.scorer!.dir)) errs.push(`scorer.dir: ${cfg.scorer!.dir} does not exist`);
  if (isInside(cfg.scorer!.dir, cfg.agent_repo))
    errs.push(`scorer.dir: ${cfg.scorer!.dir} is inside agent_repo; the trusted scorer must not come from the agent's repo`);
  return errs;
}

/** Files the build copies that must exist: the workspace overlays' sources, the instruction template. */
function fileErrors(cfg: BuildConfig): string[] {
  const errs = cfg.workspace_overlays
    .map((o, i) => (fs.existsSync(o.source) ? null : `workspace_overlays.${i}.source: ${o.source} does not exist`))
    .filter((e): e is string => e !== null);
  if (cfg.instruction.template && !fs.existsSync(cfg.instruction.template))
    errs.push(`instruction.template: ${cfg.instruction.template} does not exist`);
  return errs;
}

/** A trusted program's dir: it exists, and not inside the agent's repo (the candidate would write its own scorer). */
function trustedDirErrors(field: string, dir: string, agentRepo: string): string[] {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return [`${field}: ${dir} is not a directory`];
  if (isInside(dir, agentRepo)) return [`${field}: ${dir} is inside agent_repo; a trusted harness must not come from the agent's repo`];
  return [];
}

/** Loads build.yaml (ours or vero's); every error names the file and the field. Reads the task source and dataset to check names. */
export function loadBuildConfig(file: string, params: BuildParams = {}, registry: RegistryLocation = {}): BuildConfig {
  const { raw, format, notes, refusals } = readBuildDocument(file, params, process.env, registry);
  const parsed = BuildConfigFile.safeParse(raw);
  const where = format === 'vero' ? `${file} (as mapped from vero's format)` : file;
  // vero's refused fields and what the mapped file breaks of ours, all at once.
  const all = (more: string[]) => new ConfigError([...refusals, ...more].join('\n'));
  if (!parsed.success) throw all([formatZodIssues(parsed.error.issues, where, BuildConfigFile)]);
  // A refused vero task_source has already been named; "inner_task: required" would say it again.
  const errs = crossFieldErrors(parsed.data).filter((e) => !(format === 'vero' && e.startsWith('inner_task:')));
  if (errs.length || refusals.length) throw all(errs.map((e) => `${where}: ${e}`));
  const baseDir = path.dirname(path.resolve(file));
  const c = parsed.data;
  const cfg: BuildConfig = {
    ...c,
    agent_repo: path.resolve(baseDir, c.agent_repo),
    ...(c.inner_task ? { inner_task: path.resolve(baseDir, c.inner_task) } : {}),
    ...(c.inner_dataset ? { inner_dataset: datasetWithRegistry(c.inner_dataset, baseDir, registry) } : {}),
    ...(c.dataset ? { dataset: path.resolve(baseDir, c.dataset) } : {}),
    ...(c.scorer ? { scorer: { ...c.scorer, dir: path.resolve(baseDir, c.scorer.dir) } } : {}),
    ...(c.harness ? { harness: { ...c.harness, dir: path.resolve(baseDir, c.harness.dir) } } : {}),
    workspace_overlays: c.workspace_overlays.map((o) => ({ ...o, source: path.resolve(baseDir, o.source) })),
    instruction: { ...c.instruction, ...(c.instruction.template ? { template: path.resolve(baseDir, c.instruction.template) } : {}) },
    file: path.resolve(file),
    baseDir,
    format,
    notes: [...notes, ...trustNotes(c)],
  };
  const sourceErrs: string[] = [];
  if (cfg.mode === 'B') {
    let available: string[] | null = null;
    if (cfg.inner_dataset) {
      const pinned = pinDataset(cfg.inner_dataset);
      sourceErrs.push(...pinned.problems.map((p) => `inner_dataset: ${p}`));
      cfg.inner_dataset = pinned.source;
      cfg.resolvedDataset = pinned.resolved;
      if (format !== 'vero') notes.push(...pinned.notes.map((n) => `inner_dataset: ${n}`)); // a vero file's mapping said it
      available = pinned.resolved?.tasks.map((t) => t.name) ?? null;
    } else
      try {
        available = availableTasks({ path: cfg.inner_task! });
      } catch (e) {
        sourceErrs.push(`inner_task: ${(e as Error).message.replace(/^tasks\.source\.path: /, '')}`);
      }
    for (const [split, names] of Object.entries(cfg.partition ?? {})) {
      const unknown = available ? names.filter((n) => !available.includes(n)) : [];
      if (unknown.length)
        sourceErrs.push(
          `partition.${split}: unknown task name(s) ${unknown.join(', ')} (${cfg.inner_dataset ? cfg.inner_dataset.ref : 'inner_task'} has: ${available!.slice(0, 8).join(', ')})`,
        );
    }
  } else sourceErrs.push(...modeASourceErrors(cfg));
  sourceErrs.push(...fileErrors(cfg));
  if (sourceErrs.length) throw new ConfigError(sourceErrs.map((e) => `${where}: ${e}`).join('\n'));
  return cfg;
}
