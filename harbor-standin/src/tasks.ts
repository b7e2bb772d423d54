/** Task discovery as in harbor 0.25 (reference/harbor.md §1.2, §4.1, §4.8, §4.9). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { isTaskDir, listDataset } from '../../harbor/task-dir';
import { fnmatchRegex } from '../../model/harbor/fnmatch';

export class ConfigError extends Error {
  constructor(
    message: string,
    /** The Python exception class Harbor would raise. */
    readonly pythonType = 'ValueError',
  ) {
    super(message);
  }
}

export interface LocalTask {
  /** The name `-i/-x` match and trial names use: the directory basename. */
  dirName: string;
  /** `TrialResult.task_name`: `[task].name` when present, else the dir basename. */
  taskName: string;
  /** The path as Harbor records it (`task_id.path`, `config.task.path`). */
  recordedPath: string;
  absPath: string;
  source: string | null;
  agentTimeoutSec: number | null;
}

interface TaskToml {
  task?: { name?: string };
  agent?: { timeout_sec?: number };
  verifier?: { environment?: unknown };
}

function readTaskToml(dir: string): TaskToml | null {
  try {
    const parsed = parseToml(fs.readFileSync(path.join(dir, 'task.toml'), 'utf8')) as TaskToml;
    const name = parsed.task?.name;
    if (name !== undefined && !/^[a-zA-Z0-9][a-zA-Z0-9._-]*\/[a-zA-Z0-9][a-zA-Z0-9._-]*$/.test(name)) return null;
    return parsed;
  } catch {
    return null;
  }
}

function loadTask(recordedPath: string, cwd: string, source: string | null): LocalTask {
  const absPath = path.resolve(cwd, recordedPath);
  const toml = readTaskToml(absPath) ?? {};
  const dirName = path.basename(absPath);
  return {
    dirName,
    taskName: toml.task?.name ?? dirName,
    recordedPath,
    absPath,
    source,
    agentTimeoutSec: toml.agent?.timeout_sec ?? null,
  };
}

export interface Selection {
  include?: string[];
  exclude?: string[];
  nTasks?: number;
}

function applySelection(tasks: LocalTask[], sel: Selection): LocalTask[] {
  let out = tasks;
  if (sel.include?.length) {
    // Harbor matches task names with Python's fnmatch.
    const patterns = sel.include.map(fnmatchRegex);
    out = out.filter((t) => patterns.some((p) => p.test(t.dirName)));
    if (out.length === 0) {
      const examples = tasks
        .slice(0, 5)
        .map((t) => t.dirName)
        .join(', ');
      throw new ConfigError(
        `No tasks matched the filter(s) ${JSON.stringify(sel.include)}. There are ${tasks.length} tasks available in this dataset. Example task names: ${examples}`,
      );
    }
  }
  if (sel.exclude?.length) {
    const patterns = sel.exclude.map(fnmatchRegex);
    out = out.filter((t) => !patterns.some((p) => p.test(t.dirName)));
  }
  if (sel.nTasks !== undefined) out = out.slice(0, sel.nTasks);
  return out;
}

/** `-p PATH`: one task when PATH is a valid task dir, else the valid task dirs directly inside it. */
export function tasksFromPath(
  p: string,
  cwd: string,
  sel: Selection,
  verificationDisabled: boolean,
): { tasks: LocalTask[]; isDataset: boolean } {
  const abs = path.resolve(cwd, p);
  if (!fs.existsSync(abs)) throw new ConfigError(`Path ${p} does not exist.`, 'FileNotFoundError');
  // `Task.is_valid_dir` of Harbor 0.25 (shared with vero's own task listing).
  if (isTaskDir(abs, { verificationDisabled })) return { tasks: applySelection([loadTask(p, cwd, null)], sel), isDataset: false };
  const source = path.basename(abs);
  // Harbor iterates Path.iterdir(), which is unordered; the stand-in sorts so its runs are reproducible.
  const children = listDataset(abs, { verificationDisabled }).tasks;
  if (children.length === 0) throw new ConfigError(`No valid tasks found in ${p}.`);
  return {
    tasks: applySelection(
      children.map((c) => loadTask(path.join(p, c), cwd, source)),
      sel,
    ),
    isDataset: true,
  };
}

interface RegistryDataset {
  name: string;
  version: string;
  tasks: { name: string; path: string; git_url?: string }[];
}

/** `-d name[@version] --registry-path FILE`: the legacy registry.json served from a local file. */
export function tasksFromRegistry(
  ref: string,
  registryPath: string | undefined,
  cwd: string,
  sel: Selection,
): { tasks: LocalTask[]; name: string; version: string } {
  if (ref.includes('/')) {
    throw new ConfigError(`Dataset ${ref} is a Harbor Hub package; the stand-in has no network access.`);
  }
  if (!registryPath) {
    throw new ConfigError(`Dataset ${ref} needs Harbor's hosted registry; pass --registry-path with a local registry.json.`);
  }
  const file = path.resolve(cwd, registryPath);
  let registry: RegistryDataset[];
  try {
    registry = JSON.parse(fs.readFileSync(file, 'utf8')) as RegistryDataset[];
  } catch (e) {
    throw new ConfigError(`Could not read registry ${registryPath}: ${(e as Error).message}`);
  }
  const [name, wanted] = ref.split('@') as [string, string | undefined];
  const candidates = registry.filter((d) => d.name === name);
  const latest = () => [...candidates].sort((a, b) => a.version.localeCompare(b.version, 'en', { numeric: true })).at(-1);
  const ds = wanted ? candidates.find((d) => d.version === wanted) : (candidates.find((d) => d.version === 'head') ?? latest());
  if (!ds) throw new ConfigError(`Dataset ${ref} not found in registry ${registryPath}.`);
  const tasks = ds.tasks.map((t) => {
    if (t.git_url) throw new ConfigError(`Task ${t.name} is a git task; the stand-in has no network access.`);
    // Harbor 0.25 resolves a relative task path against its working directory, not the registry file.
    const abs = path.resolve(cwd, t.path);
    if (!isTaskDir(abs)) throw new ConfigError(`Task ${t.name} at ${t.path} is not a valid task directory.`);
    return loadTask(abs, cwd, ds.name);
  });
  return { tasks: applySelection(tasks, sel), name: ds.name, version: ds.version };
}
