/** Resolves which tasks an evaluation runs, in a deterministic (sorted) order. */
import { runPaths } from '../model/paths';
import * as fs from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../model/errors';
import type { EvalConfig } from '../model/evaluation/config';
import { DatasetListing, isTaskDir, listDataset, notATaskBecause } from './task-dir';
import { registryTaskNames } from './dataset-ref';
import { writeFileDurable } from '../infra/atomic-file';

export type SkippedDir = DatasetListing['skipped'][number];

/**
 * The tasks a source offers and the dataset dirs that are not tasks (with the reason), or null tasks when
 * they cannot be listed offline (a Hub dataset).
 */
export function listSource(source: EvalConfig['tasks']['source']): { tasks: string[] | null; skipped: SkippedDir[] } {
  if (source.path) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(source.path, { throwIfNoEntry: false });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new ConfigError(
        `tasks.source.path: ${source.path} cannot be read (${code === 'ELOOP' ? 'ELOOP: a symlink loop' : (code ?? (e as Error).message)})`,
      );
    }
    if (!stat) throw new ConfigError(`tasks.source.path: ${source.path} does not exist`);
    if (!stat.isDirectory()) throw new ConfigError(`tasks.source.path: ${source.path} is a file; expected a task dir or a dataset dir`);
    if (isTaskDir(source.path)) return { tasks: [path.basename(source.path)], skipped: [] };
    const listing = listDataset(source.path);
    if (listing.tasks.length === 0) {
      const why = listing.skipped.slice(0, 5).map((s) => `${s.dir}: ${s.reason}`);
      throw new ConfigError(
        `tasks.source.path: ${source.path} is neither a task dir nor a dataset dir with valid task dirs` +
          (why.length ? ` (${why.join('; ')})` : ` (${notATaskBecause(source.path)})`),
      );
    }
    return listing;
  }
  return { tasks: availableTasks(source), skipped: [] };
}

/** The task names a source offers, or null when they cannot be listed offline (a Hub dataset). */
export function availableTasks(source: EvalConfig['tasks']['source']): string[] | null {
  if (source.path) return listSource(source).tasks;
  if (source.registry_path) {
    try {
      return registryTaskNames(source.dataset!, source.registry_path).sort();
    } catch (e) {
      const message = (e as Error).message;
      throw new ConfigError(
        message.startsWith(source.registry_path) && !message.includes(' holds ')
          ? `tasks.source.registry_path: ${message}`
          : `tasks.source.dataset: ${message}`,
      );
    }
  }
  return null;
}

function readPartition(file: string, split: string): string[] {
  let data: unknown;
  try {
    data = parseYaml(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`tasks.partition.file: cannot read ${file}: ${(e as Error).message.split('\n')[0]}`);
  }
  const Partition = z.union([
    z.strictObject({ splits: z.record(z.string(), z.array(z.string())) }),
    z.record(z.string(), z.array(z.string())),
  ]);
  const parsed = Partition.safeParse(data);
  if (!parsed.success) throw new ConfigError(`tasks.partition.file: ${file}: expected {splits: {name: [task, ...]}}`);
  const splits = ('splits' in parsed.data ? parsed.data.splits : parsed.data) as Record<string, string[]>;
  const names = splits[split];
  if (!names)
    throw new ConfigError(`tasks.partition.split: "${split}" is not a split of ${file} (splits: ${Object.keys(splits).join(', ')})`);
  return names;
}

/** Why no task is selected, naming the filters (and their `harbor run` flags) that left none. */
function emptySelection(sel: EvalConfig['tasks']): string {
  const filters = [
    ...(sel.include?.length ? [`tasks.include (-i) ${JSON.stringify(sel.include)}`] : []),
    ...(sel.exclude?.length ? [`tasks.exclude (-x) ${JSON.stringify(sel.exclude)}`] : []),
  ];
  return `tasks: the selection is empty${filters.length ? `: no task left by ${filters.join(' and ')}` : ''}`;
}

/** The sorted task list of an evaluation. Unknown names are errors, never silently dropped. */
export function resolveTasks(cfg: EvalConfig): string[] {
  return resolveTaskSelection(cfg).tasks;
}

/** The sorted task list, and the dataset dirs that are not tasks (to be shown, never dropped silently). */
export function resolveTaskSelection(cfg: EvalConfig): { tasks: string[]; skipped: SkippedDir[] } {
  const sel = cfg.tasks;
  const listing = listSource(sel.source);
  const available = listing.tasks;
  let names: string[];
  if (sel.names) names = sel.names;
  else if (sel.partition) names = readPartition(sel.partition.file, sel.partition.split);
  else if (available) names = available;
  else throw new ConfigError('tasks: a registry dataset without registry_path cannot be listed offline; give tasks.names');
  if (available) {
    const unknown = names.filter((n) => !available.includes(n));
    if (unknown.length) {
      throw new ConfigError(
        `tasks: unknown task name(s) ${unknown.slice(0, 10).join(', ')}${unknown.length > 10 ? ', …' : ''} (the source has ${available.length} tasks, e.g. ${available.slice(0, 5).join(', ')})`,
      );
    }
  }
  if (sel.include?.length) {
    const inc = picomatch(sel.include, { dot: true });
    names = names.filter((n) => inc(n));
  }
  if (sel.exclude?.length) {
    const ex = picomatch(sel.exclude, { dot: true });
    names = names.filter((n) => !ex(n));
  }
  const unique = [...new Set(names)].sort();
  if (unique.length === 0) throw new ConfigError(emptySelection(sel));
  return { tasks: sel.limit ? unique.slice(0, sel.limit) : unique, skipped: listing.skipped };
}

/**
 * A copy of a local registry.json whose relative task `path`s are resolved against the registry file's own
 * dir. Real Harbor resolves them against its working directory, which is vero's own (never the user's), so
 * harbor gets this copy: the same config then means the same tasks wherever harbor runs. Written to
 * `outDir/registry.json` (atomically, only when it changes); returns its path.
 */
export function resolvedRegistryFile(registryPath: string, runDir: string): string {
  const reg = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { tasks?: { path?: unknown }[] }[];
  const base = path.dirname(path.resolve(registryPath));
  for (const ds of Array.isArray(reg) ? reg : []) {
    for (const t of ds.tasks ?? []) if (typeof t.path === 'string' && !path.isAbsolute(t.path)) t.path = path.resolve(base, t.path);
  }
  const text = `${JSON.stringify(reg, null, 2)}\n`;
  const out = runPaths(runDir).resolvedRegistry;
  if (fs.existsSync(out) && fs.readFileSync(out, 'utf8') === text) return out;
  writeFileDurable(out, text);
  return out;
}
