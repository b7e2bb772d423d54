/**
 * buildTaskDir: build.yaml → a runnable Harbor task dir. Everything is validated before anything is written;
 * the task is built in a temp dir next to the target and renamed into place, so a failed build leaves the
 * previous output untouched and nothing behind. Only a dir carrying a vero build manifest is ever replaced.
 */
import { upstreamKeyEnvs } from '../model/gateway/policy';
import { wandbKeyEnvs } from '../model/compiled-task/wandb-spec';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../model/errors';
import { ensureHarborWheelhouse } from '../infra/foreground';
import { findTemporalCli } from '../infra/temporal-cli';
import { buildBaseline } from './baseline';
import { BUILD_DIGEST_FILE, buildDigestOf } from './build-digest';
import { BuildConfig, loadBuildConfig } from './build-config';
import { readJson } from '../infra/json-file';
import { bakedRegistry, isBakeable, type RegistryLocation } from '../harbor/dataset-ref';
import { CONTAINER } from '../model/compiled-task/serve-config';
import { CONTEXT, sidecarPythonPackages } from './containers';
import { imagesToPreload, innerBaseImages, saveImages } from './nested-docker';
import { usesLocalDocker } from '../model/harbor/config';
import { instructionText } from './instruction-template';
import { writeDigestAndSealKey } from './seal-key';
import { BAKED_REGISTRY, finalizeBound, renderFiles } from './render';
import { keepForThrowawayBuilds, linkOrCopy, linkOrWriteVeroPackage, writeVeroPackage } from './vero-package';
import { writeFileDurable, writeJsonDurable } from '../infra/atomic-file';

export const MANIFEST = '.vero-build.json';
const EXECUTABLES = new Set(['tests/test.sh', 'solution/solve.sh', 'environment/main/seed.sh', `environment/${CONTEXT.startScript}`]);

export interface BuildOptions {
  /** Build even when declared secrets are missing from this environment (the compose guard still applies). */
  skipSecretCheck?: boolean;
  /** `${NAME}` values for the build file (over the environment). */
  params?: Record<string, string>;
  /** The legacy registry a registry task source is resolved in (`--registry-path`, `--registry-url`). */
  registry?: RegistryLocation;
  /**
   * Hard-link the files taken unchanged from this machine (the Temporal CLI, Harbor's wheels) instead of copying
   * them, and the vero package to the one an earlier such build of this process wrote: for throwaway builds on one
   * file system, such as tests' (the task then shares those files, and must not change them).
   */
  linkRuntime?: boolean;
}

export interface BuildResult {
  outDir: string;
  taskName: string;
  mode: 'A' | 'B';
  baseCommit: string;
  sourceCommit: string;
  /** What a rescued session of this task records, and a relaunch must match (compiler/build-digest.ts). */
  buildDigest: string;
  files: number;
  /** What the build could not settle but the task may still run with (e.g. inner images left to a registry). */
  warnings: string[];
  /** The task has an inference gateway: start it with `vero run` (it makes the optimizer's token). */
  gateway: boolean;
}

/** Refuses to touch an existing path that is not a previous build output. */
function checkTarget(outDir: string): void {
  if (!fs.existsSync(outDir)) return;
  if (readJson<{ tool?: string }>(path.join(outDir, MANIFEST))?.tool !== 'vero-harbor build')
    throw new ConfigError(`-o ${outDir}: exists and is not a vero build output (no ${MANIFEST}); refusing to replace it`);
}

export function missingSecrets(c: Pick<BuildConfig, 'secrets' | 'gateway' | 'wandb'>, env: NodeJS.ProcessEnv = process.env): string[] {
  return [...new Set([...c.secrets, ...upstreamKeyEnvs(c.gateway), ...wandbKeyEnvs(c.wandb)])].filter((s) => !env[s]);
}

/** The build's Harbor and harbor_packages as wheels for the sidecar image's Python (scripts/ensure-harbor-wheelhouse, cached). */
function harborWheelhouse(python: string, harborVersion: string, packages: string[]): string {
  try {
    return ensureHarborWheelhouse(python, harborVersion, packages);
  } catch {
    const also = packages.length ? ` with harbor_packages ${packages.join(', ')}` : '';
    throw new ConfigError(
      `no Harbor ${harborVersion} wheelhouse${also} for Python ${python} (see the messages above): the Mode B sidecar installs Harbor from it`,
    );
  }
}

/** Files of the sidecar's build context that come from this host: the Temporal CLI, Harbor, nested images. */
async function addSidecarTools(config: BuildConfig, env: string, link: boolean): Promise<string[]> {
  const warnings: string[] = [];
  const cli = path.join(env, CONTEXT.temporalCli);
  fs.mkdirSync(path.dirname(cli), { recursive: true });
  const temporal = fs.realpathSync(findTemporalCli());
  // A linked CLI is the one this machine runs (executable already): its mode is left alone.
  if (!(link && linkOrCopy(temporal, cli))) {
    await fs.promises.copyFile(temporal, cli);
    fs.chmodSync(cli, 0o755);
  }
  if (config.mode !== 'B') return warnings;
  const wheels = harborWheelhouse(config.images.sidecar_python, config.harbor_version, sidecarPythonPackages(config));
  fs.mkdirSync(path.join(env, CONTEXT.wheelhouse), { recursive: true });
  for (const f of fs.readdirSync(wheels).filter((n) => n.endsWith('.whl')))
    if (link) linkOrCopy(path.join(wheels, f), path.join(env, CONTEXT.wheelhouse, f));
    else await fs.promises.copyFile(path.join(wheels, f), path.join(env, CONTEXT.wheelhouse, f)); // in libuv's pool
  if (!usesLocalDocker(config.harbor?.environment)) return warnings;
  const baked = config.inner_task ?? path.join(env, 'sidecar', 'inner-task', 'tasks');
  const inner = fs.existsSync(baked) ? innerBaseImages(baked) : [];
  const preload = await imagesToPreload(config.nested_docker?.preload_images, config.format === 'vero', inner);
  const notLoaded = inner.filter((i) => !preload.includes(i));
  if (config.nested_docker === undefined && preload.length)
    warnings.push(
      `nested Docker: the inner tasks' base image(s) ${preload.join(', ')} are saved from this host's engine and loaded into the sidecar's`,
    );
  if (notLoaded.length)
    warnings.push(
      `the inner tasks build FROM ${notLoaded.join(', ')}, not in nested_docker.preload_images: the sidecar's engine will pull them from a registry`,
    );
  if (preload.length) await saveImages(preload, path.join(env, CONTEXT.nestedImages), config.file);
  else writeFileDurable(path.join(env, CONTEXT.nestedImages), '', { fsync: false }); // nothing to load; the start script skips an empty file
  return warnings;
}

/**
 * The sidecar's inner tasks: the local dir; or a legacy registry dataset a local registry resolved, its tasks
 * copied with a registry.json that lists them where the sidecar has them (harbor/dataset-ref.ts); or nothing, for
 * a dataset the sidecar's Harbor fetches when the task runs.
 */
function bakeInnerTasks(config: BuildConfig, dir: string): void {
  if (config.inner_task) return void fs.cpSync(config.inner_task, dir, { recursive: true });
  fs.mkdirSync(dir, { recursive: true });
  if (!isBakeable(config.inner_dataset!, config.resolvedDataset)) return;
  const { registry, copies } = bakedRegistry(config.resolvedDataset, CONTAINER.innerTask);
  for (const [from, rel] of copies) fs.cpSync(from, path.join(dir, rel), { recursive: true });
  writeFileDurable(path.join(dir, path.basename(BAKED_REGISTRY)), `${JSON.stringify(registry, null, 2)}\n`, { fsync: false });
}

/**
 * What the build bakes into the images: the sidecar's inner tasks (mode B), its command harness, or its dataset
 * and scorer (mode A); the workspace overlays for main (a dir's contents under its dest, a file as dest/<name>).
 */
function bakeSources(config: BuildConfig, env: string): void {
  if (config.mode === 'B') bakeInnerTasks(config, path.join(env, 'sidecar', 'inner-task'));
  else if (config.harness) fs.cpSync(config.harness.dir, path.join(env, 'sidecar', 'harness'), { recursive: true });
  else {
    fs.cpSync(config.dataset!, path.join(env, 'sidecar', 'dataset'), { recursive: true });
    fs.cpSync(config.scorer!.dir, path.join(env, 'sidecar', 'scorer'), { recursive: true });
  }
  for (const o of config.workspace_overlays) {
    const dest = path.join(env, 'overlay', o.dest);
    fs.mkdirSync(dest, { recursive: true });
    if (fs.statSync(o.source).isDirectory()) fs.cpSync(o.source, dest, { recursive: true });
    else fs.copyFileSync(o.source, path.join(dest, path.basename(o.source)));
  }
}

/** Samples per split: the partition's tasks (Mode B) or the dataset's rows (Mode A). */
function splitSizes(config: BuildConfig): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const { split } of config.splits) {
    if (config.mode === 'B' || config.harness) sizes[split] = config.partition?.[split]?.length ?? 0;
    else
      sizes[split] = fs
        .readFileSync(path.join(config.dataset!, `${split}.jsonl`), 'utf8')
        .split('\n')
        .filter((l) => l.trim()).length;
  }
  return sizes;
}

function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== '.git') walk(p);
      } else out.push(path.relative(root, p).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out;
}

export async function buildTaskDir(configFile: string, outDir: string, opts: BuildOptions = {}): Promise<BuildResult> {
  const config = loadBuildConfig(configFile, opts.params, opts.registry);
  const missing = missingSecrets(config);
  if (missing.length && !opts.skipSecretCheck) {
    throw new ConfigError(
      `${config.file}: secrets missing from the host environment: ${missing.join(', ')} (export them, or pass --skip-secret-check; the compose file still refuses to start without them)`,
    );
  }
  instructionText(config); // a template error is reported before anything is written
  const out = path.resolve(outDir);
  checkTarget(out);
  const parent = path.dirname(out);
  fs.mkdirSync(parent, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(parent, `.${path.basename(out)}.tmp-`));
  try {
    const env = path.join(tmp, 'environment');
    fs.mkdirSync(env);
    const baseline = await buildBaseline(config.agent_repo, path.join(env, 'agent-baseline'), config.agent_ref);
    // main's seed and the sidecar's repo share one commit.
    fs.cpSync(path.join(env, 'agent-baseline'), path.join(env, 'agent-seed'), { recursive: true });
    bakeSources(config, env);
    const veroPackage = `environment/${CONTEXT.veroPackage}`;
    // Its SHA-256 comes with it: the manifest does not read hundreds of MB again.
    const veroSha256 = await (opts.linkRuntime ? linkOrWriteVeroPackage : writeVeroPackage)(path.join(tmp, veroPackage));
    const warnings = [...config.notes, ...(await addSidecarTools(config, env, opts.linkRuntime ?? false))];
    const sizes = splitSizes(config);
    const bound = finalizeBound(config, sizes);
    if (config.verifier_timeout !== undefined && config.verifier_timeout < bound)
      warnings.push(
        `verifier_timeout: ${config.verifier_timeout} s is below finalize's worst case (${bound} s): a slow finalize is cut off without a reward`,
      );
    for (const [rel, text] of Object.entries(renderFiles({ config, baseCommit: baseline.commit, splitSizes: sizes }))) {
      const file = path.join(tmp, rel);
      // Not flushed one by one: the whole dir is renamed into place once built.
      writeFileDurable(file, text, { mode: EXECUTABLES.has(rel) ? 0o755 : 0o644, fsync: false });
    }
    const files = listFiles(tmp);
    // Streamed and awaited: the context is hundreds of MB, read on a worker's event loop.
    const digest = async (rel: string) => {
      const file = path.join(tmp, rel);
      const hash = createHash('sha256');
      if ((await fs.promises.stat(file)).size < 16 << 20) hash.update(await fs.promises.readFile(file));
      else for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
      return hash.digest('hex');
    };
    const digests: [string, string][] = [];
    for (const f of files) digests.push([f, f === veroPackage ? veroSha256 : await digest(f)]);
    const buildDigest = buildDigestOf(digests);
    writeDigestAndSealKey(tmp, buildDigest);
    digests.push([BUILD_DIGEST_FILE, await digest(BUILD_DIGEST_FILE)]);
    digests.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const manifest = {
      tool: 'vero-harbor build',
      task: config.name,
      mode: config.mode,
      base_commit: baseline.commit,
      source_commit: baseline.source.sha,
      build_digest: buildDigest,
      files: Object.fromEntries(digests),
    };
    writeJsonDurable(path.join(tmp, MANIFEST), manifest, { fsync: false });

    let old: string | null = null;
    if (fs.existsSync(out)) {
      checkTarget(out);
      old = `${tmp.replace('.tmp-', '.old-')}`;
      fs.renameSync(out, old);
    }
    fs.renameSync(tmp, out);
    if (old) fs.rmSync(old, { recursive: true, force: true });
    if (opts.linkRuntime) keepForThrowawayBuilds(path.join(out, veroPackage), veroSha256);
    return {
      outDir: out,
      taskName: config.name,
      mode: config.mode,
      baseCommit: baseline.commit,
      sourceCommit: baseline.source.sha,
      buildDigest,
      files: files.length + 2,
      warnings,
      gateway: Boolean(config.gateway),
    };
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}
