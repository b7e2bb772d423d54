/**
 * Every Docker command vero runs: whether the engine answers, the removal of what a killed trial left, and the
 * compiler's inner images (which are present, saving them into a tar).
 *
 * What a Docker trial of Harbor leaves behind when its harbor process is killed before its teardown: the
 * compose project `sanitize(<trial>__env)` with its container (`…-main-1`), network (`…_default`), image
 * (`…-main`) and volumes. Removed by name prefix, per trial, with the harbor process's own Docker settings.
 */
import * as fs from 'node:fs';
import { execa } from 'execa';

/** Harbor's `_sanitize_docker_compose_project_name`. */
export function composeProjectPrefix(trialName: string): string {
  let name = `${trialName}__`.toLowerCase();
  if (!/^[a-z0-9]/.test(name)) name = `0${name}`;
  return name.replace(/[^a-z0-9_-]/g, '-');
}

async function docker(args: string[], env: Record<string, string>): Promise<string[]> {
  const r = await execa('docker', args, { env, extendEnv: false, reject: false, timeout: 60_000 });
  return r.exitCode === 0 ? String(r.stdout).split('\n').filter(Boolean) : [];
}

export interface RemovedLeftovers {
  containers: string[];
  networks: string[];
  images: string[];
  volumes: string[];
}

/** The trial dirs of a Harbor job dir (none when it does not exist). */
function trialDirNames(jobDir: string): string[] {
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

/** Removes every container, network, image and volume of the given trials' compose projects. */
export async function removeTrialLeftovers(trialNames: string[], env: Record<string, string>): Promise<RemovedLeftovers> {
  const removed: RemovedLeftovers = { containers: [], networks: [], images: [], volumes: [] };
  if (trialNames.length === 0) return removed;
  const prefixes = trialNames.map(composeProjectPrefix);
  const ours = (name: string) => prefixes.some((p) => name.replace(/^\//, '').startsWith(p));
  const containers = (await docker(['ps', '-a', '--format', '{{.Names}}'], env)).filter(ours);
  if (containers.length) await docker(['rm', '-f', '-v', ...containers], env);
  const networks = (await docker(['network', 'ls', '--format', '{{.Name}}'], env)).filter(ours);
  if (networks.length) await docker(['network', 'rm', ...networks], env);
  const images = (await docker(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}'], env)).filter(ours);
  if (images.length) await docker(['image', 'rm', '-f', ...images], env);
  const volumes = (await docker(['volume', 'ls', '--format', '{{.Name}}'], env)).filter(ours);
  if (volumes.length) await docker(['volume', 'rm', '-f', ...volumes], env);
  Object.assign(removed, { containers, networks, images, volumes });
  return removed;
}

/** Whether the Docker engine harbor would use answers (same DOCKER_HOST etc. as the harbor process). */
export async function dockerAnswers(env: Record<string, string>): Promise<boolean> {
  try {
    const r = await execa('docker', ['info', '--format', '{{.ServerVersion}}'], {
      env: { ...process.env, ...env } as Record<string, string>,
      extendEnv: false,
      reject: false,
      timeout: 20_000,
    });
    return r.exitCode === 0;
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
