/**
 * Mode B with a local nested environment: the eval sidecar runs its own Docker engine, and the inner tasks'
 * base images are saved here (`docker image save`) and loaded into that engine when the sidecar starts, so
 * nested trials need no image registry.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { missingImages, saveImagesTar } from '../infra/docker';
import { ConfigError } from '../model/errors';

/** The images the inner tasks' Dockerfiles start FROM (build stages named in the same file are not images). */
export function innerBaseImages(innerTaskDir: string): string[] {
  const dockerfiles: string[] = [];
  const visit = (dir: string, depth: number) => {
    const df = path.join(dir, 'environment', 'Dockerfile');
    if (fs.existsSync(df)) dockerfiles.push(df);
    else if (depth === 0)
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) visit(path.join(dir, e.name), 1);
  };
  visit(innerTaskDir, 0);
  const images = new Set<string>();
  for (const df of dockerfiles) {
    const stages = new Set<string>();
    for (const line of fs.readFileSync(df, 'utf8').split('\n')) {
      const m = /^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
      if (!m) continue;
      if (!stages.has(m[1]!.toLowerCase()) && !m[1]!.includes('$')) images.add(m[1]!);
      if (m[2]) stages.add(m[2].toLowerCase());
    }
  }
  return [...images].sort();
}

/**
 * The images loaded into the sidecar's engine: the declared `nested_docker.preload_images`; without a declaration
 * in a vero file (vero's schema has no such field), the inner tasks' base images that this host's engine holds
 * (the others are left to a registry, with a warning).
 */
export async function imagesToPreload(
  declared: string[] | undefined,
  veroFormat: boolean,
  innerImages: string[],
  missingOf: (images: string[]) => Promise<string[]> = missingImages,
): Promise<string[]> {
  if (declared !== undefined || !veroFormat) return declared ?? [];
  const missing = await missingOf(innerImages);
  return innerImages.filter((i) => !missing.includes(i));
}

/** Saves the images into one tar for the sidecar's engine; every missing image is named at once. */
export async function saveImages(images: string[], tarFile: string, configFile: string): Promise<void> {
  const missing = await missingImages(images);
  if (missing.length)
    throw new ConfigError(
      `${configFile}: nested_docker.preload_images: not in the local Docker engine: ${missing.join(', ')} (build or pull them first; scripts/ensure-docker makes vero-base:bookworm)`,
    );
  fs.mkdirSync(path.dirname(tarFile), { recursive: true });
  const failed = await saveImagesTar(images, tarFile);
  if (failed !== null) throw new ConfigError(`docker image save ${images.join(' ')} failed: ${failed}`);
}
