/**
 * Every Docker command vero runs: whether the engine answers, the removal of what a killed trial left, the
 * compiler's inner images (which are present, saving them into a tar), and a trial's stop wait (the stream of
 * signals sent to containers, a container's processes, its SIGKILL: harbor/stop-wait.ts).
 *
 * What a Docker trial of Harbor leaves behind when its harbor process is killed before its teardown: the compose
 * projects Harbor names after the trial's session (`sanitize(<trial>__env)`, and `sanitize(<trial>__verifier__…)`
 * for a separate verifier) with their containers (`…-main-1`), networks (`…_default`), built images (`…-main`)
 * and volumes. Compose labels each of them with its project (`com.docker.compose.project`): only objects so
 * labelled, with a project of one of the given trials, are removed, with the harbor process's own Docker settings.
 */
import * as fs from 'node:fs';
import type { Readable } from 'node:stream';
import { execa } from 'execa';
import { type ContainerProcess, parseContainerProcesses, TOP_COLUMNS } from '../model/harbor/docker-signals';

/** Harbor's `_sanitize_docker_compose_project_name`. */
export function composeProjectPrefix(trialName: string): string {
  let name = `${trialName}__`.toLowerCase();
  if (!/^[a-z0-9]/.test(name)) name = `0${name}`;
  return name.replace(/[^a-z0-9_-]/g, '-');
}

/** A docker command's result, run with `env` (a harbor process's Docker settings) over this process's environment. */
const dockerRun = (args: string[], env: Record<string, string>, timeout = 60_000) =>
  execa('docker', args, { env: { ...process.env, ...env } as Record<string, string>, extendEnv: false, reject: false, timeout });

/** A docker command's output lines; none when it failed (`partial`: whatever it printed, as `inspect` of some gone objects). */
async function docker(args: string[], env: Record<string, string>, partial = false): Promise<string[]> {
  const r = await execa('docker', args, { env, extendEnv: false, reject: false, timeout: 60_000 });
  return r.exitCode === 0 || partial
    ? String(r.stdout ?? '')
        .split('\n')
        .filter(Boolean)
    : [];
}

export interface RemovedLeftovers {
  containers: string[];
  networks: string[];
  images: string[];
  volumes: string[];
}

/** The trial dirs of a Harbor job dir (none when it does not exist). */
export function trialDirNames(jobDir: string): string[] {
  try {
    return fs
      .readdirSync(jobDir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** Removes what the trials of a stopped job (its trial dirs) left in Docker. */
export function removeJobLeftovers(jobDir: string, env: Record<string, string>): Promise<RemovedLeftovers> {
  return removeTrialLeftovers(trialDirNames(jobDir), env);
}

const PROJECT_LABEL = 'com.docker.compose.project';

type DockerKind = 'container' | 'network' | 'volume' | 'image';

/** The `inspect` template of an object: its id, its compose project, its name (an image's: its tags). */
function describeFormat(kind: DockerKind): string {
  const labels = kind === 'container' || kind === 'image' ? '.Config.Labels' : '.Labels';
  const id = kind === 'volume' ? '.Name' : '.Id';
  const name = kind === 'image' ? '{{range .RepoTags}}{{.}} {{end}}' : '{{.Name}}';
  return `{{${id}}}\t{{index ${labels} "${PROJECT_LABEL}"}}\t${name}`;
}

/** The objects of one kind labelled with a compose project that begins with one of `prefixes`: ids and names. */
async function labelledObjects(kind: DockerKind, prefixes: string[], env: Record<string, string>) {
  const list = kind === 'container' ? ['ps', '-a'] : [kind, 'ls'];
  const ids = await docker([...list, '-q', '--filter', `label=${PROJECT_LABEL}`], env);
  if (ids.length === 0) return { ids: [], names: [] };
  const rows = (await docker([kind, 'inspect', '--format', describeFormat(kind), ...new Set(ids)], env, true))
    .map((l) => l.split('\t'))
    .filter(([, project]) => project !== undefined && prefixes.some((p) => project.startsWith(p)));
  return { ids: rows.map(([id]) => id!), names: rows.map(([id, , name]) => (name?.trim() || id!).replace(/^\//, '')) };
}

/** Removes every container, network, image and volume of the given trials' compose projects (and nothing else). */
export async function removeTrialLeftovers(trialNames: string[], env: Record<string, string>): Promise<RemovedLeftovers> {
  const removed: RemovedLeftovers = { containers: [], networks: [], images: [], volumes: [] };
  if (trialNames.length === 0) return removed;
  const prefixes = trialNames.map(composeProjectPrefix);
  const steps: [keyof RemovedLeftovers, DockerKind, string[]][] = [
    ['containers', 'container', ['rm', '-f', '-v']],
    ['networks', 'network', ['network', 'rm']],
    ['images', 'image', ['image', 'rm', '-f']],
    ['volumes', 'volume', ['volume', 'rm', '-f']],
  ];
  for (const [field, kind, rm] of steps) {
    const found = await labelledObjects(kind, prefixes, env);
    if (found.ids.length) await docker([...rm, ...found.ids], env);
    removed[field] = found.names;
  }
  return removed;
}

/** Whether the Docker engine harbor would use answers (same DOCKER_HOST etc. as the harbor process). */
export async function dockerAnswers(env: Record<string, string>): Promise<boolean> {
  try {
    return (await dockerRun(['info', '--format', '{{.ServerVersion}}'], env, 20_000)).exitCode === 0;
  } catch {
    return false;
  }
}

/** Which of `images` the local Docker engine does not have. */
export async function missingImages(images: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const image of images) {
    const r = await execa('docker', ['image', 'inspect', '--format', '{{.Id}}', image], { reject: false });
    if (r.exitCode !== 0) missing.push(image);
  }
  return missing;
}

/** `docker image save` of `images` into one tar; null when it worked, else docker's stderr. */
export async function saveImagesTar(images: string[], tarFile: string): Promise<string | null> {
  const r = await execa('docker', ['image', 'save', '-o', tarFile, ...images], { reject: false });
  return r.exitCode === 0 ? null : String(r.stderr).trim();
}

/**
 * `docker events "$@"` that ends when its stdin closes: when the caller stops listening, or dies (even SIGKILLed).
 * Only docker events holds the stdout pipe, so its own end (the engine went away) is the pipe's end.
 */
const EVENTS_UNTIL_STDIN_CLOSES = 'exec 3>&1 >/dev/null; docker "$@" >&3 & exec 3>&-; read -r _; kill $! 2>/dev/null';

/**
 * A running `docker events` of the signals Docker sends to compose-labelled containers (a stop's, a kill's) from
 * `sinceMs` on (so none sent while it connects is missed), one JSON object per line; `stop` ends it, and so does the
 * caller's death; `ended` is its end; `kill` ends the shell's process group (the shell and docker events) at once,
 * should `stop` not end it.
 */
export function containerSignalEvents(env: Record<string, string>, sinceMs: number) {
  const filters = ['type=container', 'event=kill', `label=${PROJECT_LABEL}`].flatMap((f) => ['--filter', f]);
  const args = ['events', '--since', (sinceMs / 1000).toFixed(3), ...filters, '--format', '{{json .}}'];
  const events = execa('sh', ['-c', EVENTS_UNTIL_STDIN_CLOSES, 'sh', ...args], {
    env: { ...process.env, ...env } as Record<string, string>,
    extendEnv: false,
    buffer: false,
    reject: false,
    stdin: 'pipe',
    stderr: 'ignore',
    detached: true, // its own process group, so `kill` reaches docker events too
    // Not execa's clean-up on this process's exit: its signal handlers, loaded while the stream runs, would make a
    // SIGTERM or SIGINT this process handles itself (a worker's graceful shutdown) kill it. The stream ends with its
    // stdin anyway, when this process ends.
    cleanup: false,
  });
  events.stdin.on('error', () => undefined); // (the shell gone already: its end is `ended`)
  const stop = () => events.stdin.end();
  events.stdout.on('end', stop);
  const kill = () => {
    try {
      process.kill(-events.pid!, 'SIGKILL');
    } catch {
      // (gone already)
    }
    events.stdout.destroy();
  };
  const ended: Promise<unknown> = events;
  return { lines: events.stdout as Readable, ended, stop, kill };
}

/** A container's processes with their signal masks and commands (`docker top`, run by the engine on its host); null when unknown. */
export async function containerProcesses(id: string, env: Record<string, string>): Promise<ContainerProcess[] | null> {
  const fullEnv = { ...process.env, ...env } as Record<string, string>;
  return parseContainerProcesses(await docker(['top', id, '-o', TOP_COLUMNS], fullEnv));
}

/** SIGKILL to a container (`docker kill`); whether Docker sent it (a container that has stopped already: no). */
export async function killContainer(id: string, env: Record<string, string>): Promise<boolean> {
  return (await dockerRun(['kill', id], env)).exitCode === 0;
}
