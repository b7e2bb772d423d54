/**
 * Harbor's dataset references (`harbor run -d REF`), the one place that knows them:
 * - the legacy registry's `name[@version]`: a dataset of a registry.json (a local file with `--registry-path`, a
 *   URL with `--registry-url`, else Harbor's hosted registry); its tasks are git or local task dirs, and the
 *   names `-i` matches are the basenames of their `path`;
 * - the package registry's `org/name[@ref]` (Harbor Hub): a ref is a tag, a revision or `sha256:<digest>`, the
 *   dataset version's content hash; its tasks are packages `org/task` pinned by their own digests.
 *
 * The digest that pins a dataset (docs/vero-configs.md "Registry task sources"):
 * - a package dataset: its `sha256:` content hash, as Harbor's dataset.toml defines it (the sha256 of its tasks'
 *   digests, sorted, comma-joined; then `;` and its files' sorted `path:digest`, when it has files). The ref
 *   carries it; a local registry that records the task digests is checked against it;
 * - a legacy dataset, which has none in Harbor: the sha256 of its registry entry (name, version and, in name
 *   order, each task's name with its git URL, commit and path, or, for a local task dir, the hash of its files
 *   in the manner of Harbor's task content hash), so a registry that changes what `name@version` holds, or a
 *   task dir whose files change, no longer matches.
 * A local registry.json may also hold package datasets (an offline copy of Harbor Hub's): an entry named
 * `org/name` whose `version` is its `sha256:` digest, each task with the `digest` of its dataset.toml entry.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../model/errors';

export const SHA256_DIGEST = /^sha256:[0-9a-f]{64}$/;

export type DatasetRef = { form: 'legacy'; name: string; version?: string } | { form: 'package'; org: string; name: string; ref?: string };

/** Where the legacy registry is: a local registry.json (`--registry-path`) or its URL (`--registry-url`). */
export interface RegistryLocation {
  path?: string;
  url?: string;
}

/** `name[@version]` or `org/name[@ref]`, as Harbor's CLI reads `-d`; null when it is neither. */
export function parseDatasetRef(s: string): DatasetRef | null {
  const at = s.indexOf('@');
  const name = at < 0 ? s : s.slice(0, at);
  const version = at < 0 ? undefined : s.slice(at + 1);
  if (version === '' || /\s/.test(s)) return null;
  const slash = name.indexOf('/');
  if (slash < 0) return /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) ? { form: 'legacy', name, ...(version ? { version } : {}) } : null;
  const org = name.slice(0, slash);
  const short = name.slice(slash + 1);
  const part = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
  if (!part.test(org) || !part.test(short)) return null;
  return { form: 'package', org, name: short, ...(version ? { ref: version } : {}) };
}

const refName = (r: DatasetRef) => (r.form === 'legacy' ? r.name : `${r.org}/${r.name}`);
const refVersion = (r: DatasetRef) => (r.form === 'legacy' ? r.version : r.ref);

/** A task of a registry.json dataset (Harbor's RegistryTaskId, plus the package digest an offline copy records). */
const RegistryTask = z.looseObject({
  name: z.string().min(1),
  path: z.string().min(1),
  git_url: z.string().nullish(),
  git_commit_id: z.string().nullish(),
  digest: z.string().regex(SHA256_DIGEST, 'expected sha256:<64 hex>').optional(),
});
const RegistryFile = z.array(
  z.looseObject({
    name: z.string().min(1),
    version: z.string().min(1),
    description: z.string().optional(),
    tasks: z.array(RegistryTask),
    /** A package dataset's files (dataset.toml `[[files]]`), by digest: part of its content hash. */
    files: z.array(z.looseObject({ path: z.string().min(1), digest: z.string().regex(SHA256_DIGEST) })).optional(),
  }),
);
export type RegistryEntry = z.infer<typeof RegistryFile>[number];

/** A task as the sidecar's Harbor will see it: the name `-i` matches, and where it comes from. */
interface DatasetTask {
  name: string;
  /** An absolute local dir (relative `path`s resolved against the registry file's dir), or a git task's path. */
  path: string;
  git_url?: string;
  git_commit_id?: string;
  /** A package task's digest, when the registry records it. */
  digest?: string;
}

export interface ResolvedDataset {
  /** The dataset at its pin: `name@version`, or `org/name@sha256:…`. */
  ref: string;
  digest: string;
  tasks: DatasetTask[];
  /** The registry file's entry, as read (for baking a copy). */
  entry: RegistryEntry;
}

/** Reads a local registry.json (Harbor's legacy format); a problem is thrown as one line. */
export function readRegistryFile(file: string): RegistryEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(
      `${file}: not a readable registry.json (${(e as NodeJS.ErrnoException).code ?? (e as Error).message.split('\n')[0]})`,
    );
  }
  const parsed = RegistryFile.safeParse(data);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new ConfigError(`${file}: not a Harbor registry.json (${i.path.join('.') || 'top level'}: ${i.message})`);
  }
  return parsed.data;
}

/** The sha256 of a task dir's files: `relative path \0 sha256 \n` in path order (Harbor's task content hash scheme). */
function taskDirDigest(dir: string): string {
  const files: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git' || e.name === '__pycache__' || e.name.endsWith('.pyc')) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), r);
      else if (e.isFile()) files.push(r);
    }
  };
  walk(dir, '');
  const outer = createHash('sha256');
  for (const r of files.sort())
    outer.update(
      `${r}\0${createHash('sha256')
        .update(fs.readFileSync(path.join(dir, r)))
        .digest('hex')}\n`,
    );
  return `sha256:${outer.digest('hex')}`;
}

/** The digest of a legacy dataset: its registry entry, canonically, local task dirs by their files (see the header). */
export function legacyDatasetDigest(entry: RegistryEntry, registryDir: string): string {
  const tasks = entry.tasks
    .map(
      (t) =>
        [
          t.name,
          t.git_url ?? null,
          t.git_commit_id ?? null,
          t.git_url ? t.path : taskDirDigest(path.resolve(registryDir, t.path)),
        ] as const,
    )
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const canonical = JSON.stringify({ name: entry.name, version: entry.version, tasks });
  return `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

/** A package dataset's digest from its tasks' digests (and files' `path:digest`), as Harbor's dataset.toml hashes it. */
export function packageDatasetDigest(taskDigests: string[], files: { path: string; digest: string }[] = []): string {
  const hex = (d: string) => d.replace(/^sha256:/, '');
  let base = taskDigests.map(hex).sort().join(',');
  if (files.length)
    base += `;${files
      .map((f) => `${f.path}:${hex(f.digest)}`)
      .sort()
      .join(',')}`;
  return `sha256:${createHash('sha256').update(base).digest('hex')}`;
}

/** The name Harbor's `-i` matches for a registry task: a package task's `org/name`, else its path's basename. */
function taskName(ref: DatasetRef, t: z.infer<typeof RegistryTask>): string {
  return ref.form === 'package' ? t.name : path.basename(t.path.replace(/[/\\]+$/, ''));
}

/** The entry of a local registry.json a reference names (the highest version when it names none), or why there is none. */
function findEntry(refText: string, registryFile: string): { ref: DatasetRef; entry: RegistryEntry } | { problem: string } {
  const ref = parseDatasetRef(refText);
  if (!ref) return { problem: `${refText} is not a Harbor dataset reference (name@version or org/name@sha256:<digest>)` };
  let entries: RegistryEntry[];
  try {
    entries = readRegistryFile(registryFile);
  } catch (e) {
    return { problem: (e as Error).message };
  }
  const name = refName(ref);
  const versions = entries.filter((e) => e.name === name);
  if (!versions.length)
    return {
      problem: `${registryFile} holds no dataset ${name} (it holds: ${[...new Set(entries.map((e) => e.name))].join(', ') || 'none'})`,
    };
  const wanted = refVersion(ref);
  if (ref.form === 'package' && (wanted === undefined || !SHA256_DIGEST.test(wanted)))
    return { problem: `${refText}: a package dataset from a local registry must be pinned by its digest (${name}@sha256:<64 hex>)` };
  const entry =
    wanted === undefined
      ? versions.sort((a, b) => compareVersions(a.version, b.version)).at(-1)!
      : versions.find((e) => e.version === wanted);
  if (entry) return { ref, entry };
  const held = versions.map((e) => e.version).join(', ');
  return {
    problem:
      ref.form === 'package'
        ? `digest mismatch: ${refText} pins ${wanted}, but ${registryFile} holds ${name} at ${held}`
        : `${registryFile} holds ${name} at version(s) ${held}, not ${wanted}`,
  };
}

/** The names Harbor's `-i` matches in a local registry's dataset (no digest computed); a problem is thrown as one line. */
export function registryTaskNames(refText: string, registryFile: string): string[] {
  const found = findEntry(refText, registryFile);
  if ('problem' in found) throw new ConfigError(found.problem);
  return found.entry.tasks.map((t) => taskName(found.ref, t));
}

/**
 * Resolves a reference against a local registry.json and pins it: a legacy version (or the highest, when none is
 * given) to its entry's digest, a package digest verified to be the one the registry holds. `pinned` (a digest
 * recorded earlier, e.g. by a previous build) must be the one found. Problems name both digests where two differ.
 */
export function resolveInRegistry(
  refText: string,
  registryFile: string,
  pinned?: string,
): { resolved: ResolvedDataset | null; problems: string[] } {
  const found = findEntry(refText, registryFile);
  if ('problem' in found) return { resolved: null, problems: [found.problem] };
  const { ref, entry } = found;
  const name = refName(ref);
  const problems: string[] = [];
  const base = path.dirname(path.resolve(registryFile));
  const tasks = entry.tasks.map(
    (t): DatasetTask => ({
      name: taskName(ref, t),
      path: t.git_url ? t.path : path.resolve(base, t.path),
      ...(t.git_url ? { git_url: t.git_url } : {}),
      ...(t.git_commit_id ? { git_commit_id: t.git_commit_id } : {}),
      ...(t.digest ? { digest: t.digest } : {}),
    }),
  );
  const missing = tasks.filter((t) => !t.git_url && !fs.existsSync(t.path)).map((t) => t.path);
  if (missing.length) {
    const more = missing.length > 5 ? ', …' : '';
    return {
      resolved: null,
      problems: [`${name}@${entry.version}: task dir(s) of ${registryFile} missing: ${missing.slice(0, 5).join(', ')}${more}`],
    };
  }
  const digest = ref.form === 'package' ? entry.version : legacyDatasetDigest(entry, base);
  if (ref.form === 'package' && tasks.length && tasks.every((t) => t.digest)) {
    const computed = packageDatasetDigest(
      tasks.map((t) => t.digest!),
      entry.files ?? [],
    );
    if (computed !== digest)
      problems.push(`digest mismatch: ${registryFile} lists ${name} at ${digest}, but its tasks' digests hash to ${computed}`);
  }
  if (pinned !== undefined && pinned !== digest)
    problems.push(`digest mismatch: ${name}@${entry.version} was pinned at ${pinned}, but ${registryFile} now gives ${digest}`);
  // Found: returned with its problems, so that a caller can name what else disagrees with it.
  return { resolved: { ref: `${name}@${entry.version}`, digest, tasks, entry }, problems };
}

/** Harbor's order of versions when none is given: `head` first, else the highest numeric one, else the last by text. */
function compareVersions(a: string, b: string): number {
  if (a === 'head' || b === 'head') return a === b ? 0 : a === 'head' ? 1 : -1;
  const num = (v: string) => (/^\d+(\.\d+)*$/.test(v) ? v.split('.').map(Number) : null);
  const [x, y] = [num(a), num(b)];
  if (x && y) {
    for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
    return 0;
  }
  if (x || y) return x ? 1 : -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The pin a reference carries by itself, unresolved: a package's `sha256:` ref, else none. */
function inherentDigest(refText: string): string | null {
  const ref = parseDatasetRef(refText);
  return ref?.form === 'package' && ref.ref !== undefined && SHA256_DIGEST.test(ref.ref) ? ref.ref : null;
}

/**
 * A registry.json for the build's copy of a legacy dataset: the one entry, its local tasks at `tasks/<name>`
 * under `bakedRoot` (the sidecar's copy), git tasks as they were (Harbor fetches them, pinned by commit).
 */
export function bakedRegistry(resolved: ResolvedDataset, bakedRoot: string): { registry: RegistryEntry[]; copies: [string, string][] } {
  const copies: [string, string][] = [];
  const tasks = resolved.entry.tasks.map((t, i) => {
    const task = resolved.tasks[i]!;
    if (task.git_url) return t;
    copies.push([task.path, `tasks/${task.name}`]);
    return { ...t, path: `${bakedRoot}/tasks/${task.name}` };
  });
  // Harbor's DatasetSpec requires a description.
  return { registry: [{ ...resolved.entry, description: resolved.entry.description ?? '', tasks }], copies };
}

/** A registry dataset as a build records it (our build.yaml's `inner_dataset`; serve.json's source). */
export interface DatasetSource {
  ref: string;
  registry_path?: string;
  registry_url?: string;
  digest?: string;
}

/**
 * Pins a dataset source at build time: resolved against a local registry.json when there is one (a version to its
 * digest, a digest verified, the tasks listed), else recorded as it is (a package ref carries its digest) for the
 * sidecar's Harbor to resolve when the task runs, with a note saying so.
 */
export function pinDataset(src: DatasetSource): {
  source: DatasetSource;
  resolved: ResolvedDataset | null;
  problems: string[];
  notes: string[];
} {
  const ref = parseDatasetRef(src.ref);
  if (!ref)
    return {
      source: src,
      resolved: null,
      problems: [`${src.ref} is not a Harbor dataset reference (name@version, or org/name@sha256:<digest> of Harbor's package registry)`],
      notes: [],
    };
  if (src.registry_path !== undefined && src.registry_url !== undefined)
    return { source: src, resolved: null, problems: ['registry_path and registry_url: give one registry, not both'], notes: [] };
  if (src.registry_path !== undefined) {
    const { resolved, problems } = resolveInRegistry(src.ref, src.registry_path, src.digest);
    const notes =
      resolved && !problems.length && ref.form === 'package'
        ? [
            `${src.ref}: verified against ${src.registry_path}; a package dataset is served by Harbor Hub, so the sidecar's Harbor fetches it by its digest when the task runs`,
          ]
        : [];
    return { source: resolved ? { ...src, ref: resolved.ref, digest: resolved.digest } : src, resolved, problems, notes };
  }
  const inherent = inherentDigest(src.ref);
  const problems =
    src.digest !== undefined && inherent !== null && src.digest !== inherent
      ? [`digest mismatch: ${src.ref} pins ${inherent}, but the recorded digest is ${src.digest}`]
      : [];
  const where = ref.form === 'package' ? 'Harbor Hub' : (src.registry_url ?? "Harbor's hosted registry");
  const pin = src.digest ?? inherent;
  const notes = [
    `${src.ref}: no local registry (--registry-path) to resolve it at build time: recorded as is${pin ? ` (pinned at ${pin})` : ' (a version, not pinned to a digest)'}; the sidecar's Harbor resolves it from ${where} when the task runs`,
  ];
  return { source: { ...src, ...(pin ? { digest: pin } : {}) }, resolved: null, problems, notes };
}

/** serve.json's registry source: what the sidecar's Harbor gets (`-d`, a registry flag) and the pin it checks. */
export type RunSource = Omit<DatasetSource, 'ref'> & { dataset: string };

/** Whether the build copies the dataset into the task: a legacy dataset a local registry resolved (Harbor reads it offline). */
export const isBakeable = (src: DatasetSource, resolved: ResolvedDataset | null | undefined): resolved is ResolvedDataset =>
  !!resolved && parseDatasetRef(src.ref)?.form === 'legacy';

/**
 * The sidecar's source for a pinned dataset: `-d` with the pinned ref (a package by its digest), and the baked
 * registry.json (`--registry-path`) when the build copied the dataset, else the registry URL it was given, else
 * none (Harbor's hosted registry, Harbor Hub).
 */
export function runSourceOf(src: DatasetSource, bakedRegistryFile?: string): RunSource {
  const ref = parseDatasetRef(src.ref);
  const dataset = ref?.form === 'package' && src.digest ? `${refName(ref)}@${src.digest}` : src.ref;
  return {
    dataset,
    ...(bakedRegistryFile ? { registry_path: bakedRegistryFile } : src.registry_url ? { registry_url: src.registry_url } : {}),
    ...(src.digest ? { digest: src.digest } : {}),
  };
}

/** serve.json's source as an evaluation's `tasks.source`: a dir (`-p`), or the dataset with its registry flag (`-d`). */
export function evalSourceOf(s: { path: string } | RunSource): { path: string } | Omit<RunSource, 'digest'> {
  if ('path' in s) return { path: s.path };
  const { digest: _pin, ...source } = s;
  return source;
}
