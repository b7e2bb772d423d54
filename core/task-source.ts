/** Resolves which tasks an evaluation runs, in a deterministic (sorted) order. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from './errors';
import type { EvalConfig } from './eval-config';

/** Harbor's `Task.is_valid_dir` (harbor.md §4.1), without the verifier-environment exception. */
export function isTaskDir(dir: string): boolean {
  try {
    if (!fs.statSync(path.join(dir, 'environment')).isDirectory()) return false;
    parseToml(fs.readFileSync(path.join(dir, 'task.toml'), 'utf8'));
    return fs.existsSync(path.join(dir, 'instruction.md')) && fs.existsSync(path.join(dir, 'tests', 'test.sh'));
  } catch {
    return false;
  }
}

/** The task names a source offers, or null when they cannot be listed offline (a Hub dataset). */
export function availableTasks(source: EvalConfig['tasks']['source']): string[] | null {
  if (source.path) {
    if (!fs.existsSync(source.path)) throw new ConfigError(`tasks.source.path: ${source.path} does not exist`);
    if (isTaskDir(source.path)) return [path.basename(source.path)];
    const names = fs
      .readdirSync(source.path, { withFileTypes: true })
      .filter((d) => d.isDirectory() && isTaskDir(path.join(source.path!, d.name)))
      .map((d) => d.name)
      .sort();
    if (names.length === 0)
      throw new ConfigError(`tasks.source.path: ${source.path} is neither a task dir nor a dataset dir with valid task dirs`);
    return names;
  }
  if (source.registry_path) {
    const Registry = z.array(
      z.looseObject({ name: z.string(), version: z.string(), tasks: z.array(z.looseObject({ name: z.string(), path: z.string() })) }),
    );
    let reg: z.infer<typeof Registry>;
    try {
      reg = Registry.parse(JSON.parse(fs.readFileSync(source.registry_path, 'utf8')));
    } catch (e) {
      throw new ConfigError(
        `tasks.source.registry_path: ${source.registry_path}: not a readable registry.json (${(e as Error).message.split('\n')[0]})`,
      );
    }
    const [name, version] = source.dataset!.split('@');
    const ds = reg.find((d) => d.name === name && (!version || d.version === version));
    if (!ds) throw new ConfigError(`tasks.source.dataset: ${source.dataset} is not in ${source.registry_path}`);
    return ds.tasks.map((t) => path.basename(t.path)).sort();
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

/** The sorted task list of an evaluation. Unknown names are errors, never silently dropped. */
export function resolveTasks(cfg: EvalConfig): string[] {
  const sel = cfg.tasks;
  const available = availableTasks(sel.source);
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
  if (unique.length === 0) throw new ConfigError('tasks: the selection is empty');
  return unique;
}
