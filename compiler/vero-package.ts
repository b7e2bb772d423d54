/**
 * The vero-harbor package as a compiled task's images install it: built code plus its production
 * dependencies, copied from this installation, so `docker build` runs no `npm ci` and needs no registry
 * (inside containers HTTPS may pass a TLS-inspecting proxy whose CA the image lacks).
 *
 * The production closure is read from package-lock.json (entries not marked `dev`); native add-ons keep only
 * the release for this platform (the images run on the build host's architecture).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../model/errors';
import { PROJECT_ROOT } from '../infra/package-root';

interface LockEntry {
  dev?: boolean;
}

/** Paths (relative to the project) of every production dependency that is installed here. */
export function productionDependencyDirs(root = PROJECT_ROOT): string[] {
  const lockFile = path.join(root, 'package-lock.json');
  const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as { packages?: Record<string, LockEntry> };
  return Object.entries(lock.packages ?? {})
    .filter(([rel, e]) => rel.startsWith('node_modules/') && !e.dev)
    .map(([rel]) => rel)
    .filter((rel) => fs.existsSync(path.join(root, rel)))
    .sort();
}

/** Temporal's core bridge ships one native build per platform; the images need only this host's. */
const NATIVE_RELEASE_DIR = `${path.sep}@temporalio${path.sep}core-bridge${path.sep}releases${path.sep}`;
function linuxTriple(): string {
  return `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-gnu`;
}

function keep(src: string): boolean {
  if (src.endsWith('.map')) return false;
  const i = src.indexOf(NATIVE_RELEASE_DIR);
  if (i >= 0) {
    const platform = src.slice(i + NATIVE_RELEASE_DIR.length).split(path.sep)[0];
    if (platform && platform !== linuxTriple()) return false;
  }
  // The bridge's Rust sources are for building it, not for running it.
  return !src.includes(`${path.sep}@temporalio${path.sep}core-bridge${path.sep}sdk-core`);
}

/** Lets the event loop run (heartbeats of the worker's other activities) between two synchronous copies. */
export const yieldToEventLoop = () => new Promise<void>((r) => setImmediate(r));

/**
 * Copies the runnable package (bin, scripts, dist, production node_modules) to `dest`. Hundreds of MB, on a
 * worker whose other activities must keep heartbeating: each dependency is copied synchronously (fs.cpSync is ≈ 4×
 * faster than fs.promises.cp here) and the event loop runs between two of them. With `link`, files are hard links to
 * this installation's (see linkOrCopy).
 */
export async function copyVeroPackage(dest: string, root = PROJECT_ROOT, link = false): Promise<void> {
  const dist = path.join(root, 'dist');
  if (!fs.existsSync(path.join(dist, 'cli', 'main.js')))
    throw new ConfigError(`${dist} is missing; run \`npm run build\` before \`vero build\``);
  fs.mkdirSync(dest, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) await fs.promises.copyFile(path.join(root, f), path.join(dest, f));
  for (const d of ['bin', 'scripts', 'dist'])
    copyTree(
      path.join(root, d),
      path.join(dest, d),
      (src) => !src.endsWith('.map') && !src.includes(`${path.sep}bench${path.sep}`) && !src.includes(`${path.sep}test${path.sep}`),
      link,
    );
  const deps = productionDependencyDirs(root);
  if (!deps.some((d) => d === 'node_modules/@temporalio/worker'))
    throw new ConfigError(`${root}/node_modules has no @temporalio/worker; run \`npm ci\` before \`vero build\``);
  for (const rel of deps) {
    // Nested node_modules are entries of their own in the lockfile (dev ones among them): copy each level alone.
    const from = path.join(root, rel);
    await yieldToEventLoop();
    copyTree(
      from,
      path.join(dest, rel),
      (src) => keep(src) && !(src !== from && path.basename(src) === 'node_modules' && path.dirname(src) === from),
      link,
    );
  }
}

/** fs.cpSync of a tree (symlinks copied as links); with `link`, its files become hard links (linkOrCopy). */
function copyTree(from: string, to: string, filter: (src: string) => boolean, link: boolean): void {
  if (!link) return fs.cpSync(from, to, { recursive: true, dereference: false, filter });
  const walk = (src: string, dst: string) => {
    if (!filter(src)) return;
    const stat = fs.lstatSync(src);
    if (stat.isDirectory()) {
      fs.mkdirSync(dst, { recursive: true });
      for (const name of fs.readdirSync(src)) walk(path.join(src, name), path.join(dst, name));
    } else if (stat.isFile()) linkOrCopy(src, dst);
    else fs.cpSync(src, dst, { dereference: false });
  };
  walk(from, to);
}

/**
 * A hard link at `dst` to `src` (a copy where the file system cannot link them): for throwaway builds (tests),
 * which then share the file with its source and must not change it. True when linked.
 */
export function linkOrCopy(src: string, dst: string): boolean {
  try {
    fs.linkSync(src, dst);
    return true;
  } catch (e) {
    if (!['EXDEV', 'EPERM', 'EMLINK'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
    fs.copyFileSync(src, dst);
    return false;
  }
}
