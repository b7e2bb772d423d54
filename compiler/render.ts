/**
 * Renders every text file of a compiled task from objects, with serializers (TOML, YAML, JSON) and
 * shell-quoting: nothing user-supplied is ever pasted into a template.
 */
import { quote } from 'shell-quote';
import { stringify as toToml } from 'smol-toml';
import { stringify as toYaml } from 'yaml';
import { HARBOR_VERSION } from '../model/harbor-version';
import { CONTAINER, ServeConfig } from '../model/serve-config';
import type { BuildConfig } from './build-config';
import { renderInstruction } from './instruction';

export interface RenderInput {
  config: BuildConfig;
  baseCommit: string;
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
    baseline_floor: c.baseline_floor,
    targets: c.targets,
    submit_enabled: c.submit_enabled,
    read_only_paths: c.read_only_paths,
    secrets: c.secrets,
    harness_user: 'harness',
    timeout_sec: c.timeout,
    max_concurrency: c.max_concurrency,
    paths: {
      home: CONTAINER.home,
      agent_volume: CONTAINER.agentVolume,
      admin_volume: CONTAINER.adminVolume,
      token_path: CONTAINER.tokenPath,
    },
    ...(c.mode === 'B' ? { mode_b: { harbor: c.harbor!, task_source: { path: CONTAINER.innerTask }, partition: c.partition! } } : {}),
    ...(c.mode === 'A'
      ? {
          mode_a: {
            dataset_dir: CONTAINER.dataset,
            inference: c.inference!,
            scorer: { command: c.scorer!.command, cwd: CONTAINER.scorer },
          },
        }
      : {}),
    host: '0.0.0.0',
    port: 8000,
  });
}

export function taskToml(c: BuildConfig): string {
  const doc = {
    schema_version: '1.4',
    task: { name: c.name, description: c.description },
    metadata: { generated_by: 'vero-harbor build', mode: c.mode },
    agent: { user: 'agent', ...(c.agent_timeout !== undefined ? { timeout_sec: c.agent_timeout } : {}) },
    verifier: { timeout_sec: c.timeout + 120, environment_mode: 'shared' },
    environment: { build_timeout_sec: 1800 },
  };
  return `${toToml(doc)}\n`;
}

export function composeFile(c: BuildConfig): string {
  const secretEnv = Object.fromEntries(
    c.secrets.map((s) => [s, `\${${s}:?${s} must be set in the host environment for the eval sidecar}`]),
  );
  const healthcheck = `fetch('http://127.0.0.1:8000/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`;
  const doc = {
    services: {
      main: {
        command: ['/opt/seed.sh'],
        environment: { VERO_EVAL_URL: CONTAINER.sidecarUrl },
        volumes: [`agent_repo:${CONTAINER.workAgent}`, `agent_results:${CONTAINER.agentVolume}:ro`, `token_state:/state/token:ro`],
        depends_on: { 'eval-sidecar': { condition: 'service_healthy' } },
      },
      'eval-sidecar': {
        build: { context: '.', dockerfile: 'sidecar/Dockerfile' },
        command: ['vero', 'serve', '--config', CONTAINER.serveJson],
        environment: { VERO_HOME: CONTAINER.home, ...secretEnv },
        volumes: [
          `agent_repo:${CONTAINER.workAgent}:ro`,
          `agent_results:${CONTAINER.agentVolume}`,
          `admin_state:${CONTAINER.adminVolume}`,
          `token_state:/state/token`,
        ],
        healthcheck: { test: ['CMD', 'node', '-e', healthcheck], interval: '5s', timeout: '5s', retries: 60, start_period: '10s' },
      },
    },
    volumes: { agent_repo: {}, agent_results: {}, admin_state: {}, token_state: {} },
  };
  return toYaml(doc, { lineWidth: 0 });
}

const INSTALL_VERO = [
  'COPY vero /opt/vero',
  'RUN cd /opt/vero && npm ci --omit=dev --no-audit --no-fund && ln -s /opt/vero/bin/vero /usr/local/bin/vero',
];

export function mainDockerfile(c: BuildConfig): string {
  return [
    `FROM ${c.images.main}`,
    'RUN apt-get update && apt-get install -y --no-install-recommends bash git ca-certificates curl && rm -rf /var/lib/apt/lists/*',
    ...INSTALL_VERO,
    'COPY agent-seed /opt/agent-seed',
    'COPY main/seed.sh /opt/seed.sh',
    'RUN chmod 0755 /opt/seed.sh && useradd -m -u 1001 agent',
    `WORKDIR ${CONTAINER.workAgent}`,
    '',
  ].join('\n');
}

export function sidecarDockerfile(c: BuildConfig): string {
  const modeB = c.mode === 'B';
  return [
    `FROM ${c.images.sidecar}`,
    `RUN apt-get update && apt-get install -y --no-install-recommends bash git ca-certificates python3 python3-venv${modeB ? ' curl' : ''} && rm -rf /var/lib/apt/lists/*`,
    ...INSTALL_VERO,
    // The sidecar runs evaluations as durable workflows on its own Temporal dev server.
    'RUN /opt/vero/scripts/ensure-temporal',
    ...(modeB
      ? [
          `RUN python3 -m venv /opt/uv && /opt/uv/bin/pip install uv==0.13.8 && /opt/uv/bin/uv tool install --python 3.12 harbor==${HARBOR_VERSION} && ln -s /root/.local/bin/harbor /usr/local/bin/harbor`,
        ]
      : []),
    // Untrusted candidate code runs as this user, without access to the token, ledger, labels or secrets.
    'RUN useradd -m -u 1002 harness',
    `COPY agent-baseline ${CONTAINER.baseline}`,
    ...(modeB
      ? [`COPY sidecar/inner-task ${CONTAINER.innerTask}`]
      : [
          `COPY sidecar/dataset ${CONTAINER.dataset}`,
          `COPY sidecar/scorer ${CONTAINER.scorer}`,
          `RUN chmod -R go-rwx ${CONTAINER.dataset} ${CONTAINER.scorer}`,
        ]),
    `COPY sidecar/serve.json ${CONTAINER.serveJson}`,
    // 0711: the harness user may traverse to the job dirs and worktrees it is handed, but not list the home.
    `RUN mkdir -p ${CONTAINER.home} && chmod 0711 ${CONTAINER.home}`,
    '',
  ].join('\n');
}

export function seedScript(c: BuildConfig): string {
  // Paths are locked in the working tree as a courtesy (a quoted glob names no file and is skipped); the
  // sidecar enforces every pattern on commits.
  const ro = c.read_only_paths.map((p) => `${CONTAINER.workAgent}/${p}`);
  return [
    '#!/bin/bash',
    '# Seeds the optimizer workbench (runs as root in `main`).',
    'set -euo pipefail',
    `if [ ! -d ${CONTAINER.workAgent}/.git ]; then cp -a ${CONTAINER.seed}/. ${CONTAINER.workAgent}/; fi`,
    `chown -R agent:agent ${CONTAINER.workAgent}`,
    `git config --system --add safe.directory ${CONTAINER.workAgent}`,
    '# read_only_paths are enforced by the eval sidecar on every candidate commit (a commit that changes one is',
    '# refused before any budget is spent, and never graded). Locking them here only saves the agent a wasted',
    '# commit; the scorer and labels never come from the agent repo in any case.',
    ...(ro.length
      ? [`for p in ${quote(ro)}; do`, '  if [ -e "$p" ]; then chown -R root:root "$p"; chmod -R a-w "$p"; fi', 'done']
      : ['# (no read_only_paths configured)']),
    'exec sleep infinity',
    '',
  ].join('\n');
}

export function testScript(): string {
  return [
    '#!/bin/bash',
    '# The verifier (root, in `main`): the sidecar scores the chosen candidate on the target split(s).',
    'set -uo pipefail',
    'mkdir -p /logs/verifier',
    `vero finalize --token-file ${quote([CONTAINER.tokenPath])} --output /logs/verifier/reward.json`,
    'status=$?',
    'cat /logs/verifier/reward.json 2>/dev/null',
    'exit $status',
    '',
  ].join('\n');
}

export function solveScript(c: BuildConfig): string {
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

/** Every rendered text file, by path relative to the task dir. */
export function renderFiles(input: RenderInput): Record<string, string> {
  const c = input.config;
  return {
    'task.toml': taskToml(c),
    'instruction.md': renderInstruction(c),
    'environment/docker-compose.yaml': composeFile(c),
    'environment/Dockerfile': mainDockerfile(c),
    'environment/sidecar/Dockerfile': sidecarDockerfile(c),
    'environment/sidecar/serve.json': `${JSON.stringify(serveConfig(input), null, 2)}\n`,
    'environment/main/seed.sh': seedScript(c),
    'tests/test.sh': testScript(),
    'solution/solve.sh': solveScript(c),
  };
}
