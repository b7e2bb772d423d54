/**
 * The compiled task's containers: the two Dockerfiles, the compose file that wires them, and the sidecar's
 * start script. Every image builds from its base image and the build context alone (no registry, no network
 * when the base image already has the packages: scripts/ensure-docker's vero-base:trixie images do).
 */
import { stringify as toYaml } from 'yaml';
import { PRODUCER_TOKEN_DIGEST_ENV, upstreamKeyEnvs } from '../model/gateway/policy';
import { CONTAINER } from '../model/compiled-task/serve-config';
import { NO_RESUME_VOLUME, RESUME_SESSION_ENV } from '../model/compiled-task/session-snapshot';
import { shellWord } from '../model/shell-word';
import type { BuildConfig } from './build-config';
import { usesLocalDocker } from '../model/harbor/config';
import { WANDB_PYTHON_ENV, WANDB_REQUIREMENT, wandbKeyEnvs } from '../model/compiled-task/wandb-spec';

/** Paths inside the build context (environment/) and the sidecar image. */
export const CONTEXT = {
  /** vero with its production dependencies, one uncompressed tar (compiler/vero-package.ts). */
  veroPackage: 'vero.tar',
  temporalCli: 'sidecar/temporal',
  wheelhouse: 'sidecar/harbor-wheelhouse',
  nestedImages: 'sidecar/nested-images.tar',
  startScript: 'sidecar/start.sh',
  /** The build's digest (compiler/build-digest.ts): written after every other file, and not part of it. */
  buildDigest: 'sidecar/build-digest',
  /** The ledger-seal key (compiler/seal-key.ts): the sidecar's only, like the digest written last and not part of it. */
  ledgerSealKey: 'sidecar/ledger-seal.key',
} as const;
const SIDECAR = {
  temporalCli: '/usr/local/bin/temporal',
  harborVenv: '/opt/harbor',
  nestedImages: '/opt/nested-docker/images.tar',
  startScript: '/opt/sidecar-start.sh',
  dockerData: '/var/lib/docker',
  dockerLog: '/var/log/vero-dockerd.log',
} as const;

export const nestedDocker = (c: BuildConfig): boolean => c.mode === 'B' && usesLocalDocker(c.harbor?.environment);

/** The nested engine's bridge address: fixed, so a candidate's container can be given the gateway's URL. */
const NESTED_BRIDGE_IP = '10.213.0.1';

/**
 * The gateway URL a candidate is given: the sidecar's loopback (Mode A inference and harbor's own agents run in
 * the sidecar), or with nested Docker the nested bridge's address, which the trial containers reach too.
 */
/** The gateway as `main` (the optimizer) reaches it. */
const gatewayUrlFromMain = (c: BuildConfig): string => `http://eval-sidecar:${c.gateway?.port ?? 8001}`;

export function candidateGatewayUrl(c: BuildConfig): string {
  const port = c.gateway?.port ?? 8001;
  return `http://${nestedDocker(c) ? NESTED_BRIDGE_IP : '127.0.0.1'}:${port}`;
}

/**
 * Installs the Debian packages the image lacks (none on a base image that has them: no network then), and
 * fails the build with a clear message when Node.js is older than vero's floor.
 */
function ensurePackages(packages: string[]): string[] {
  const list = packages.join(' ');
  return [
    `RUN missing=""; for p in ${list}; do dpkg-query -W -f='\${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"; done; \\`,
    '    if [ -n "$missing" ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing && rm -rf /var/lib/apt/lists/*; fi',
    `RUN node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \\`,
    `    || { echo "vero needs Node.js >= 20.19; this base image's apt gives $(node --version) (use Debian 13 or newer)" >&2; exit 1; }`,
  ];
}

/**
 * vero with its production dependencies, packed by the compiler: no `npm ci` in the image. ADD unpacks a local
 * tar into the directory (the tar holds no owners: its files are root's, as COPY made them).
 */
const INSTALL_VERO = [
  `ADD ${CONTEXT.veroPackage} ${CONTAINER.veroDir}/`,
  `RUN ln -s ${CONTAINER.veroDir}/bin/vero /usr/local/bin/vero && ln -s ${CONTAINER.veroDir}/bin/evals /usr/local/bin/evals && vero --version`,
];

export function mainDockerfile(c: BuildConfig): string {
  return [
    `FROM ${c.images.main}`,
    ...ensurePackages(['bash', 'ca-certificates', 'git', 'nodejs']),
    ...INSTALL_VERO,
    'COPY agent-seed /opt/agent-seed',
    ...(c.workspace_overlays.length ? [`COPY overlay ${CONTAINER.overlay}`] : []),
    'COPY main/seed.sh /opt/seed.sh',
    'RUN chmod 0755 /opt/seed.sh && useradd -m -u 1001 agent',
    `WORKDIR ${CONTAINER.workAgent}`,
    '',
  ].join('\n');
}

/** The Python packages the sidecar installs beside Harbor (mode B): build.yaml's harbor_packages, and W&B's client when it reports. */
export const sidecarPythonPackages = (c: BuildConfig): string[] => [...c.harbor_packages, ...(c.wandb ? [WANDB_REQUIREMENT] : [])];

/** The sidecar's W&B logger runs with the Python that has the client (sidecar/wandb-reporter.ts). */
const wandbLines = (c: BuildConfig): string[] => (c.wandb ? [`ENV ${WANDB_PYTHON_ENV}=${SIDECAR.harborVenv}/bin/python`] : []);

export function sidecarDockerfile(c: BuildConfig): string {
  const modeB = c.mode === 'B';
  const dind = nestedDocker(c);
  const packages = ['bash', 'ca-certificates', 'git', 'nodejs', 'python3', ...(modeB ? ['python3-venv'] : [])];
  if (dind) packages.push('docker.io', 'docker-cli', 'docker-compose', 'iptables');
  return [
    `FROM ${c.images.sidecar}`,
    ...ensurePackages(packages),
    ...INSTALL_VERO,
    // The sidecar runs evaluations as durable workflows on its own Temporal dev server: the CLI comes with the
    // build context (the one this host runs), not from a download.
    `COPY ${CONTEXT.temporalCli} ${SIDECAR.temporalCli}`,
    `ENV TEMPORAL_CLI_PATH=${SIDECAR.temporalCli}`,
    ...(modeB
      ? [
          // Harbor from the wheelhouse in the build context: no index, no network; readable by every user.
          `COPY ${CONTEXT.wheelhouse} /tmp/harbor-wheelhouse`,
          `RUN python3 -m venv ${SIDECAR.harborVenv} && ${SIDECAR.harborVenv}/bin/pip install --quiet --no-index --find-links /tmp/harbor-wheelhouse ${[`harbor==${c.harbor_version}`, ...sidecarPythonPackages(c)].map(shellWord).join(' ')} \\`,
          `    && ln -s ${SIDECAR.harborVenv}/bin/harbor /usr/local/bin/harbor && rm -rf /tmp/harbor-wheelhouse && harbor --version`,
          ...wandbLines(c),
        ]
      : []),
    // Untrusted candidate code runs as this user, without access to the token, ledger, labels or secrets.
    'RUN useradd -m -u 1002 harness',
    ...(dind
      ? [
          `COPY ${CONTEXT.nestedImages} ${SIDECAR.nestedImages}`,
          `COPY ${CONTEXT.startScript} ${SIDECAR.startScript}`,
          `RUN chmod 0700 ${SIDECAR.startScript}`,
        ]
      : []),
    `COPY agent-baseline ${CONTAINER.baseline}`,
    // The build ships no git index (it holds file times): made here from the commit.
    `RUN git -C ${CONTAINER.baseline} reset -q`,
    ...(modeB
      ? [`COPY sidecar/inner-task ${CONTAINER.innerTask}`]
      : c.harness
        ? harnessLines()
        : [
            `COPY sidecar/dataset ${CONTAINER.dataset}`,
            `COPY sidecar/scorer ${CONTAINER.scorer}`,
            `RUN chmod -R go-rwx ${CONTAINER.dataset} ${CONTAINER.scorer}`,
          ]),
    `COPY sidecar/serve.json ${CONTAINER.serveJson}`,
    `COPY ${CONTEXT.buildDigest} ${CONTAINER.buildDigest}`,
    `COPY ${CONTEXT.ledgerSealKey} ${CONTAINER.ledgerSealKey}`,
    `RUN chmod 0600 ${CONTAINER.serveJson} ${CONTAINER.ledgerSealKey}`,
    // 0711: the harness user may traverse to the job dirs and worktrees it is handed, but not list the home.
    `RUN mkdir -p ${CONTAINER.home} && chmod 0711 ${CONTAINER.home}`,
    '',
  ].join('\n');
}

/**
 * Mode A's command harness: readable by the harness user it runs as (it runs the candidate's code, which must not
 * reach the sidecar's own state). vero's harnesses run `python`: where the image has only python3, `python` is it.
 */
const harnessLines = (): string[] => [
  `COPY sidecar/harness ${CONTAINER.harness}`,
  `RUN chmod -R a+rX ${CONTAINER.harness} && (command -v python >/dev/null || ln -s "$(command -v python3)" /usr/local/bin/python)`,
];

/**
 * The Mode B sidecar's own Docker engine (Docker-in-Docker): started before `vero serve`, its socket group is
 * the harness user's (the nested harbor runs as that user), and the inner tasks' base images are loaded from
 * the image, so nested trials pull nothing.
 */
export function sidecarStartScript(): string {
  return [
    '#!/bin/bash',
    "# The eval sidecar's entrypoint (Mode B, nested environment docker): its own Docker engine, then vero serve.",
    'set -euo pipefail',
    // The container cannot write /proc/sys, so the engine must not insist on disabling IPv6 per interface.
    // --init: a trial container's PID 1 is docker-init, which passes the stop signal on; Harbor's `sh -c "sleep
    // infinity"` as PID 1 ignores it, and every nested trial's teardown would wait out the 10 s grace period.
    `DOCKER_ALLOW_IPV6_ON_IPV4_INTERFACE=1 dockerd --init --group harness --bip ${NESTED_BRIDGE_IP}/24 --data-root ${SIDECAR.dockerData} >>${SIDECAR.dockerLog} 2>&1 &`,
    'for _ in $(seq 1 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done',
    `docker info >/dev/null 2>&1 || { echo "the sidecar's Docker engine did not start; its log:" >&2; tail -n 30 ${SIDECAR.dockerLog} >&2; exit 1; }`,
    `if [ -s ${SIDECAR.nestedImages} ]; then docker load --quiet --input ${SIDECAR.nestedImages}; fi`,
    `exec vero serve --config ${CONTAINER.serveJson}`,
    '',
  ].join('\n');
}

/**
 * What the sidecar's engine needs from the outer one. Not `privileged: true`, which some hosts cannot grant
 * (a Docker engine that itself runs without every capability refuses it): the two capabilities an engine
 * needs (mounts, networks) beyond Docker's default set, no seccomp/AppArmor filter, and the host's cgroups.
 * This is root on the host in all but name: see docs/sidecar.md (remote environments for untrusted optimizers).
 */
const ENGINE_PRIVILEGES = {
  cap_add: ['SYS_ADMIN', 'NET_ADMIN'],
  security_opt: ['seccomp=unconfined', 'apparmor=unconfined'],
  cgroup: 'host',
};

export function composeFile(c: BuildConfig): string {
  const dind = nestedDocker(c);
  // The sidecar's keys that are not declared secrets: the gateway's upstream keys, an online W&B run's key.
  const keyEnvs = [...upstreamKeyEnvs(c.gateway), ...wandbKeyEnvs(c.wandb).filter((k) => !c.secrets.includes(k))];
  const secretEnv = Object.fromEntries(
    [...c.secrets, ...keyEnvs].map((s) => [s, `\${${s}:?${s} must be set in the host environment for the eval sidecar}`]),
  );
  // The producer token's digest: `vero run` makes the token and hands it to the optimizer's agent (--ae).
  const gatewayEnv = c.gateway
    ? {
        [PRODUCER_TOKEN_DIGEST_ENV]: `\${${PRODUCER_TOKEN_DIGEST_ENV}:?start this task with \`vero run\` (it makes the optimizer's gateway token), or see docs/gateway.md}`,
      }
    : {};
  // main never holds a key: each declared name is set empty there, whatever the host's environment has.
  const blanked = Object.fromEntries([...c.secrets, ...keyEnvs].map((s) => [s, '']));
  const healthcheck = `fetch('http://127.0.0.1:8000/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`;
  const doc = {
    services: {
      main: {
        command: ['/opt/seed.sh'],
        environment: {
          ...c.optimizer_env,
          ...blanked,
          VERO_EVAL_URL: CONTAINER.sidecarUrl,
          ...(c.gateway ? { VERO_GATEWAY_URL: gatewayUrlFromMain(c) } : {}),
        },
        volumes: [`agent_repo:${CONTAINER.workAgent}`, `agent_results:${CONTAINER.agentVolume}:ro`, `token_state:/state/token:ro`],
        depends_on: { 'eval-sidecar': { condition: 'service_healthy' } },
      },
      'eval-sidecar': {
        build: { context: '.', dockerfile: 'sidecar/Dockerfile' },
        command: dind ? [SIDECAR.startScript] : ['vero', 'serve', '--config', CONTAINER.serveJson],
        environment: { VERO_HOME: CONTAINER.home, ...secretEnv, ...gatewayEnv },
        volumes: [
          `agent_repo:${CONTAINER.workAgent}:ro`,
          `agent_results:${CONTAINER.agentVolume}`,
          `admin_state:${CONTAINER.adminVolume}`,
          `token_state:/state/token`,
          // A rescued session to resume from: `vero run --resume-from` sets the variable to the checked copy's
          // host path; otherwise an empty volume.
          `\${${RESUME_SESSION_ENV}:-${NO_RESUME_VOLUME}}:${CONTAINER.resumeDir}:ro`,
          ...(dind ? [`sidecar_docker:${SIDECAR.dockerData}`, '/sys/fs/cgroup:/sys/fs/cgroup:rw'] : []),
        ],
        ...(dind ? ENGINE_PRIVILEGES : {}),
        // An upstream on the Docker host (a local model server) is http://host.docker.internal:<port>.
        ...(c.gateway ? { extra_hosts: ['host.docker.internal:host-gateway'] } : {}),
        healthcheck: { test: ['CMD', 'node', '-e', healthcheck], interval: '5s', timeout: '5s', retries: 60, start_period: '10s' },
      },
    },
    volumes: {
      agent_repo: {},
      agent_results: {},
      admin_state: {},
      token_state: {},
      [NO_RESUME_VOLUME]: {},
      ...(dind ? { sidecar_docker: {} } : {}),
    },
  };
  return toYaml(doc, { lineWidth: 0 });
}
