/**
 * Renders every text file of a compiled task from objects, with serializers (TOML, YAML, JSON) and
 * shell-quoting: nothing user-supplied is ever pasted into a template.
 */
import { quote } from 'shell-quote';
import { stringify as toToml } from 'smol-toml';
import { finalizeBoundSec } from '../model/compiled-task/finalize-bound';
import { COMPILED_RUN_FILE, type CompiledRun } from '../model/harbor/outer-run-args';
import { CONTAINER, ServeConfig } from '../model/compiled-task/serve-config';
import { WANDB_ARTIFACT, WANDB_DIR, WANDB_END_WAIT_SEC } from '../model/compiled-task/wandb-spec';
import type { BuildConfig } from './build-config';
import {
  candidateGatewayUrl,
  composeFile,
  CONTEXT,
  mainDockerfile,
  nestedDocker,
  sidecarDockerfile,
  sidecarStartScript,
} from './containers';
import { instructionText } from './instruction-template';
import { isBakeable, runSourceOf } from '../harbor/dataset-ref';

export interface RenderInput {
  config: BuildConfig;
  baseCommit: string;
  /** Samples per split (Mode B: tasks of the partition; Mode A: dataset rows). */
  splitSizes: Record<string, number>;
}

export function serveConfig({ config: c, baseCommit }: RenderInput): ServeConfig {
  return ServeConfig.parse({
    schema_version: 1,
    task_name: c.name,
    mode: c.mode,
    repo_path: CONTAINER.baseline,
    agent_repo_path: CONTAINER.workAgent,
    base_commit: baseCommit,
    splits: c.splits,
    budgets: c.budgets,
    reward_mode: c.reward_mode,
    selection_split: c.selection_split,
    auto_best_k: c.auto_best_k,
    ...(c.rescore_attempts !== undefined ? { rescore_attempts: c.rescore_attempts } : {}),
    ...(c.auto_best_race ? { auto_best_race: c.auto_best_race } : {}),
    ...(c.eval_early_stop ? { eval_early_stop: c.eval_early_stop } : {}),
    min_selection_coverage: c.min_selection_coverage,
    baseline_floor: c.baseline_floor,
    ...(c.baseline_selection_score !== undefined ? { baseline_selection_score: c.baseline_selection_score } : {}),
    score_baseline: c.score_baseline,
    targets: c.targets,
    submit_enabled: c.submit_enabled,
    read_only_paths: c.read_only_paths,
    secrets: c.secrets,
    harness_user: c.harness_user,
    ...(c.task_services_use_upstream ? { task_services_use_upstream: true } : {}),
    timeout_sec: c.timeout,
    drain_timeout_sec: c.drain_timeout,
    scoring: c.scoring,
    objective: c.objective,
    ...(c.instruction.disclose_budget ? {} : { disclose_budget: false as const }),
    max_concurrency: c.max_concurrency,
    paths: {
      home: CONTAINER.home,
      agent_volume: CONTAINER.agentVolume,
      admin_volume: CONTAINER.adminVolume,
      token_path: CONTAINER.tokenPath,
      build_digest: CONTAINER.buildDigest,
      ledger_seal_key: CONTAINER.ledgerSealKey,
      resume_dir: CONTAINER.resumeDir,
    },
    ...(c.mode === 'B' ? { mode_b: { harbor: c.harbor!, task_source: innerSource(c), partition: c.partition! } } : {}),
    ...(c.mode === 'A' ? { mode_a: modeASection(c) } : {}),
    ...(c.gateway ? { gateway: { ...c.gateway, candidate_base_url: c.gateway.candidate_base_url ?? candidateGatewayUrl(c) } } : {}),
    ...(c.feedback ? { feedback: c.feedback } : {}),
    ...(c.wandb ? { wandb: c.wandb } : {}),
    host: '0.0.0.0',
    port: 8000,
  });
}

/** Mode A in serve.json: the baked dataset and scorer with the candidate's inference, or the baked command harness. */
function modeASection(c: BuildConfig): NonNullable<ServeConfig['mode_a']> {
  if (c.harness) return { harness: { ...c.harness, dir: CONTAINER.harness }, partition: c.partition! };
  return { dataset_dir: CONTAINER.dataset, inference: c.inference!, scorer: { command: c.scorer!.command, cwd: CONTAINER.scorer } };
}

/** Where the sidecar's inner tasks are: the baked dir, or a registry dataset (with its baked registry.json, if any). */
function innerSource(c: BuildConfig): NonNullable<ServeConfig['mode_b']>['task_source'] {
  if (!c.inner_dataset) return { path: CONTAINER.innerTask };
  return runSourceOf(c.inner_dataset, isBakeable(c.inner_dataset, c.resolvedDataset) ? BAKED_REGISTRY : undefined);
}

/** The registry.json of a baked legacy dataset, in the sidecar (its tasks under tasks/ beside it). */
export const BAKED_REGISTRY = `${CONTAINER.innerTask}/registry.json`;

/** The sidecar's session files, copied where Harbor collects them before the verifier (and when a trial fails). */
const SESSION_SNAPSHOT = `${CONTAINER.adminVolume}/session`;

/** finalize's worst case (model/compiled-task/finalize-bound.ts): every trusted evaluation at its own timeout. */
export function finalizeBound(c: BuildConfig, splitSizes: Record<string, number>): number {
  return finalizeBoundSec({
    mode: c.mode,
    auto_best_k: c.auto_best_k,
    ...(c.rescore_attempts !== undefined ? { rescore_attempts: c.rescore_attempts } : {}),
    baseline_floor: c.baseline_floor,
    pinnedSelectionScore: c.baseline_selection_score !== undefined,
    scoreBaseline: c.score_baseline,
    selection_split: c.selection_split,
    targets: c.targets,
    splitSizes,
    timeoutSec: c.timeout,
    drainSec: c.drain_timeout,
    maxConcurrency: c.max_concurrency,
    taskAttempts: c.scoring.trusted_task_attempts,
  });
}

/**
 * What Harbor rescues from the sidecar before the verifier (and when a trial fails): the session, and an offline W&B
 * run's dir, which lives on the sidecar's admin volume and would go with it (what it holds is what was logged by
 * then: the optimizer's evaluations; finalize's rows come after).
 */
function trialArtifacts(c: BuildConfig): { source: string; destination: string; service: string }[] {
  const session = { source: SESSION_SNAPSHOT, destination: 'vero-session', service: 'eval-sidecar' };
  if (c.wandb?.mode !== 'offline') return [session];
  return [session, { source: `${CONTAINER.adminVolume}/${WANDB_DIR}`, destination: WANDB_ARTIFACT, service: 'eval-sidecar' }];
}

/**
 * The collect step's timeout: the snapshot (its files and the candidates' git bundle), then ending an offline W&B
 * run, which waits at most WANDB_END_WAIT_SEC for W&B's client to write the run out — a quarter of this, so a loaded
 * machine still has the rest for the snapshot.
 */
const COLLECT_TIMEOUT_SEC = 4 * WANDB_END_WAIT_SEC;

function taskToml(c: BuildConfig, splitSizes: Record<string, number>): string {
  const verifierTimeout = finalizeBound(c, splitSizes);
  const doc = {
    schema_version: '1.4',
    // What the sidecar learned (ledger, candidates, submission) survives a trial that dies before its verifier.
    artifacts: trialArtifacts(c),
    task: { name: c.name, description: c.description },
    metadata: { generated_by: 'vero-harbor build', mode: c.mode },
    agent: { user: 'agent', ...(c.agent_timeout !== undefined ? { timeout_sec: c.agent_timeout } : {}) },
    verifier: {
      // finalize's worst case (model/compiled-task/finalize-bound.ts): every trusted evaluation at its own timeout, unless set.
      timeout_sec: c.verifier_timeout ?? verifierTimeout,
      environment_mode: 'shared',
      collect: [
        {
          // The session with its manifest (what `vero run --resume-from` restores); when that fails, at least the
          // state files as they are.
          command: `vero snapshot --config ${CONTAINER.serveJson} --out ${SESSION_SNAPSHOT} || { mkdir -p ${SESSION_SNAPSHOT} && for f in ${CONTAINER.adminVolume}/*.json; do [ -f "$f" ] && cp -p "$f" ${SESSION_SNAPSHOT}/; done; }; true`,
          service: 'eval-sidecar',
          timeout_sec: COLLECT_TIMEOUT_SEC,
        },
      ],
    },
    environment: { build_timeout_sec: c.build_timeout },
  };
  return `${toToml(doc)}\n`;
}

/**
 * vero's workspace_overlays: copied over the workspace at every start (as vero's seed does); a dest other than the
 * root is excluded from git (its top dir), so the overlay is never part of a candidate.
 */
function overlayLines(c: BuildConfig): string[] {
  if (!c.workspace_overlays.length) return [];
  const tops = [...new Set(c.workspace_overlays.filter((o) => o.dest !== '.').map((o) => `/${o.dest.split('/')[0]}/`))];
  const exclude = `${CONTAINER.workAgent}/.git/info/exclude`;
  return [
    `cp -a ${CONTAINER.overlay}/. ${CONTAINER.workAgent}/`,
    `mkdir -p ${CONTAINER.workAgent}/.git/info`,
    ...tops.map((t) => `grep -qxF ${quote([t])} ${exclude} 2>/dev/null || printf '%s\\n' ${quote([t])} >> ${exclude}`),
  ];
}

function seedScript(c: BuildConfig): string {
  // Paths are locked in the working tree as a courtesy (a quoted glob names no file and is skipped); the
  // sidecar enforces every pattern on commits.
  const ro = c.read_only_paths.map((p) => `${CONTAINER.workAgent}/${p}`);
  return [
    '#!/bin/bash',
    '# Seeds the optimizer workbench (runs as root in `main`, as its PID 1), then waits to be stopped.',
    'set -euo pipefail',
    // The build ships no git index (it holds file times: the task dir would differ from build to build).
    `if [ ! -d ${CONTAINER.workAgent}/.git ]; then cp -a ${CONTAINER.seed}/. ${CONTAINER.workAgent}/ && git -C ${CONTAINER.workAgent} reset -q; fi`,
    ...overlayLines(c),
    `chown -R agent:agent ${CONTAINER.workAgent}`,
    `git config --system --add safe.directory ${CONTAINER.workAgent}`,
    '# read_only_paths are enforced by the eval sidecar on every candidate commit (a commit that changes one is',
    '# refused before any budget is spent, and never graded). Locking them here only saves the agent a wasted',
    '# commit; the scorer and labels never come from the agent repo in any case.',
    ...(ro.length
      ? [`for p in ${quote(ro)}; do`, '  if [ -e "$p" ]; then chown -R root:root "$p"; chmod -R a-w "$p"; fi', 'done']
      : ['# (no read_only_paths configured)']),
    // PID 1 ignores a signal it has no handler for: without the trap, `docker stop` (Harbor's teardown) waits
    // its full grace period (10 s) and then kills the container.
    "trap 'exit 0' TERM INT",
    'sleep infinity &',
    'wait $!',
    '',
  ].join('\n');
}

function testScript(): string {
  return [
    '#!/bin/bash',
    '# The verifier (root, in `main`): the sidecar chooses the candidate and scores it on the target split(s).',
    '# reward.json is written only when finalize scored: when it cannot (the sidecar is down, a trusted evaluation',
    '# failed for infrastructure reasons), there is no reward file, and Harbor records RewardFileNotFoundError on',
    "# the trial instead of a score that would look like the candidate's.",
    'set -uo pipefail',
    'mkdir -p /logs/verifier',
    `vero finalize --token-file ${quote([CONTAINER.tokenPath])} --output /logs/verifier/reward.json --details /logs/verifier/finalize.json`,
    'status=$?',
    'cat /logs/verifier/reward.json 2>/dev/null',
    'exit $status',
    '',
  ].join('\n');
}

function solveScript(c: BuildConfig): string {
  return [
    '#!/bin/bash',
    "# A scripted smoke optimizer for Harbor's oracle agent: one commit, one evaluation.",
    'set -euo pipefail',
    `cd ${CONTAINER.workAgent}`,
    'echo "# optimizer touch" >> NOTES.md',
    'git add NOTES.md',
    'git -c user.name=oracle -c user.email=oracle@localhost commit -q -m "oracle: smoke candidate"',
    quote(['vero', 'eval', '--split', c.selection_split]),
    'vero budget',
    ...(c.submit_enabled ? ['vero submit'] : []),
    '',
  ].join('\n');
}

/** What `vero run` applies to the outer `harbor run` (model/harbor/outer-run-args.ts). */
function compiledRun(c: BuildConfig): CompiledRun {
  return { schema_version: 1, harbor_args: c.optimizer_harbor_args, optimizer_env: Object.keys(c.optimizer_env).sort() };
}

/** Every rendered text file, by path relative to the task dir. */
export function renderFiles(input: RenderInput): Record<string, string> {
  const c = input.config;
  return {
    'task.toml': taskToml(c, input.splitSizes),
    'instruction.md': instructionText(c),
    'environment/docker-compose.yaml': composeFile(c),
    'environment/Dockerfile': mainDockerfile(c),
    'environment/sidecar/Dockerfile': sidecarDockerfile(c),
    'environment/sidecar/serve.json': `${JSON.stringify(serveConfig(input), null, 2)}\n`,
    'environment/main/seed.sh': seedScript(c),
    'tests/test.sh': testScript(),
    ...(nestedDocker(c) ? { [`environment/${CONTEXT.startScript}`]: sidecarStartScript() } : {}),
    'solution/solve.sh': solveScript(c),
    // Only when it says something: a build without either keeps its files (and its build digest).
    ...(c.optimizer_harbor_args.length || Object.keys(c.optimizer_env).length
      ? { [COMPILED_RUN_FILE]: `${JSON.stringify(compiledRun(c), null, 2)}\n` }
      : {}),
  };
}
