/**
 * The vero-harbor package as a compiled task's images install it: built code plus its production
 * dependencies, from this installation, so `docker build` runs no `npm ci` and needs no registry
 * (inside containers HTTPS may pass a TLS-inspecting proxy whose CA the image lacks).
 *
 * It goes into the build context as ONE uncompressed tar (compiler/containers.ts CONTEXT.veroPackage, which the Dockerfiles `ADD`:
 * Docker unpacks it), not as tens of thousands of loose files that Harbor and Docker would each hash and upload
 * one by one. The tar is deterministic: the same installation gives the same bytes.
 *
 * The production closure is read from package-lock.json (entries not marked `dev`); native add-ons keep only
 * the release for this platform (the images run on the build host's architecture).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as tar from 'tar';
import { ConfigError } from '../model/errors';
import { PROJECT_ROOT } from '../infra/package-root';

interface LockEntry {
  dev?: boolean;
}

/** Paths (relative to the project) of every production dependency that is installed here. */
function productionDependencyDirs(root = PROJECT_ROOT): string[] {
  const lockFile = path.join(root, 'package-lock.json');
  const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as { packages?: Record<string, LockEntry> };
  return Object.entries(lock.packages ?? {})
    .filter(([rel, e]) => rel.startsWith('node_modules/') && !e.dev)
    .map(([rel]) => rel)
    .filter((rel) => fs.existsSync(path.join(root, rel)))
    .sort();
}

/** Temporal's core bridge ships one native build per platform; the images need only this host's. */
const NATIVE_RELEASE_DIR = '/@temporalio/core-bridge/releases/';
function linuxTriple(): string {
  return `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-gnu`;
}

/** Whether a dependency's file (`rel`: its '/'-separated path in the project) goes into the images. */
function keep(rel: string): boolean {
  const src = `/${rel}`;
  if (src.endsWith('.map')) return false;
  const i = src.indexOf(NATIVE_RELEASE_DIR);
  if (i >= 0) {
    const platform = src.slice(i + NATIVE_RELEASE_DIR.length).split('/')[0];
    if (platform && platform !== linuxTriple()) return false;
  }
  // The bridge's Rust sources are for building it, not for running it.
  return !src.includes('/@temporalio/core-bridge/sdk-core');
}

/**
 * Whether a file of bin/, scripts/ or dist/ goes into the images: no source maps, and not the built benchmarks
 * and tests (dist/bench, dist/test: what package.json's `files` leaves out too); a folder named so elsewhere stays.
 */
const keepBuilt = (rel: string) => !rel.endsWith('.map') && !/^dist\/(bench|test)(\/|$)/.test(rel);

/** Lets the event loop run (heartbeats of the worker's other activities) between two synchronous steps. */
const yieldToEventLoop = () => new Promise<void>((r) => setImmediate(r));

/** The package's entries: '/'-separated paths relative to the project, each with its lstat. */
type Entries = Map<string, fs.Stats>;

/** Adds `rel` and what it holds (filtered; a pruned directory's contents are not read) to `entries`. */
function addTree(root: string, rel: string, entries: Entries, filter: (rel: string) => boolean): void {
  if (!filter(rel)) return;
  const stat = fs.lstatSync(path.join(root, rel));
  if (!stat.isDirectory() && !stat.isFile() && !stat.isSymbolicLink()) return; // sockets, fifos: nothing to run
  entries.set(rel, stat);
  if (stat.isDirectory()) for (const name of fs.readdirSync(path.join(root, rel))) addTree(root, `${rel}/${name}`, entries, filter);
}

/** The directories above `rel` (node_modules, a scope, a package holding a nested node_modules), as entries. */
function addParents(root: string, rel: string, entries: Entries): void {
  for (let dir = path.posix.dirname(rel); dir !== '.' && !entries.has(dir); dir = path.posix.dirname(dir))
    entries.set(dir, fs.lstatSync(path.join(root, dir)));
}

/**
 * What the package holds: package.json and its lock, bin/, scripts/, dist/ (no maps, benchmarks or tests) and each
 * production dependency of the lockfile (a nested node_modules is an entry of its own there, dev ones among them:
 * each level is walked alone). Synchronous per dependency; the event loop runs between two of them.
 */
async function packageEntries(root: string): Promise<Entries> {
  const dist = path.join(root, 'dist');
  if (!fs.existsSync(path.join(dist, 'cli', 'main.js')))
    throw new ConfigError(`${dist} is missing; run \`npm run build\` before \`vero build\``);
  const deps = productionDependencyDirs(root);
  if (!deps.some((d) => d === 'node_modules/@temporalio/worker'))
    throw new ConfigError(`${root}/node_modules has no @temporalio/worker; run \`npm ci\` before \`vero build\``);
  const entries: Entries = new Map();
  for (const f of ['package.json', 'package-lock.json']) entries.set(f, fs.lstatSync(path.join(root, f)));
  for (const d of ['bin', 'scripts', 'dist']) addTree(root, d, entries, keepBuilt);
  // The Python programs the sidecar runs (its W&B logger): sources, not built.
  for (const f of PYTHON_PROGRAMS) {
    addParents(root, f, entries);
    addTree(root, f, entries, () => true);
  }
  for (const dep of deps) {
    await yieldToEventLoop();
    addParents(root, dep, entries);
    addTree(root, dep, entries, (rel) => keep(rel) && rel !== `${dep}/node_modules`);
  }
  return entries;
}

/** Python programs of the project that the images run, beside dist/. */
const PYTHON_PROGRAMS = ['sidecar/wandb_logger.py'];

/** The time every file of the tar carries (directories carry none): the package's bytes do not depend on when it was installed. */
const FIXED_MTIME = new Date('2000-01-01T00:00:00Z');

/**
 * Writes the package to `dest` as an uncompressed tar: entries in path order (a directory before what it holds),
 * every file a regular file (even where this installation hard-links it), modes as installed (node-tar's
 * portable form: owner-readable, no group/other write), no owner ids or names (Docker unpacks them as root, as
 * `COPY` did), one fixed mtime. The same installation gives byte-identical tars. Streamed with node-tar's async
 * packer: the files are read in libuv's pool, and the worker's event loop keeps running (heartbeats). Returns the
 * tar's SHA-256, hashed as it is written (for the manifest, without reading hundreds of MB again).
 */
export async function writeVeroPackage(dest: string, root = PROJECT_ROOT): Promise<string> {
  const entries = await packageEntries(root);
  const statCache = new Map<string, fs.Stats>();
  for (const [rel, stat] of entries) {
    // nlink 1: node-tar would write a second path of one inode as a hard-link entry, depending on how this
    // installation was made (npm's cache, a linked worktree) rather than on what it holds.
    stat.nlink = 1;
    statCache.set(path.join(root, rel), stat);
  }
  const pack = new tar.Pack({ cwd: root, portable: true, mtime: FIXED_MTIME, noDirRecurse: true, strict: true, statCache });
  const out = fs.createWriteStream(dest);
  const done = new Promise<void>((resolve, reject) => {
    pack.on('error', reject);
    out.on('error', reject);
    out.on('close', resolve);
  });
  done.catch(() => undefined); // awaited below: an error while entries are still being queued is not unhandled
  const sha256 = createHash('sha256');
  pack.on('data', (chunk: Buffer) => sha256.update(chunk));
  pack.pipe(out);
  const sorted = [...entries.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (let i = 0; i < sorted.length; i++) {
    if (i % 500 === 0) await yieldToEventLoop(); // queuing an entry costs a little; twenty thousand, a stall
    pack.add(sorted[i]!);
  }
  pack.end();
  try {
    await done;
  } catch (e) {
    pack.destroy?.();
    out.destroy();
    throw e;
  }
  return sha256.digest('hex');
}

/** The package a finished throwaway build of this process holds, for the next ones to link to. */
let throwaway: { file: string; identity: string; sha256: string } | undefined;

/** What tells a kept package from another file at its path: inode, size and modification time. */
const identityOf = (st: fs.Stats) => `${st.ino}:${st.size}:${st.mtimeMs}`;

/**
 * For throwaway builds (tests): a hard link to the package an earlier throwaway build of this process kept
 * (keepForThrowawayBuilds), while that file is still there; else a new tar. The installation is taken not to
 * change under a running process.
 */
export async function linkOrWriteVeroPackage(dest: string, root = PROJECT_ROOT): Promise<string> {
  const kept = throwaway && fs.statSync(throwaway.file, { throwIfNoEntry: false });
  if (!kept || identityOf(kept) !== throwaway!.identity) return writeVeroPackage(dest, root);
  linkOrCopy(throwaway!.file, dest);
  return throwaway!.sha256;
}

/** Records a finished throwaway build's package (its final path, its SHA-256) for linkOrWriteVeroPackage. */
export function keepForThrowawayBuilds(file: string, sha256: string): void {
  throwaway = { file, identity: identityOf(fs.statSync(file)), sha256 };
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
