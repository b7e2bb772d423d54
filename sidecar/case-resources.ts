/**
 * The tasks of the splits that expose their case resources (`splits[].expose_case_resources`, vero's
 * `agent_access[].expose_case_resources`), copied where the optimizer reads (the agent volume, read-only in
 * `main`) when the sidecar starts:
 *
 *   tasks/index.json                   {schema_version, splits: [{split, path, cases}]}
 *   tasks/<split>/index.json           {schema_version, split, cases: [{case_id, task_name, path}], dataset_files_path}
 *   tasks/<split>/tasks/<task>/…       the whole Harbor task dir (instruction, environment, tests, solution)
 *   tasks/<split>/dataset-files/…      the task source's own top-level files, when it has any
 *
 * Only the exposed splits' tasks are copied (a task dir that is not directly in the source, or a symlink, never);
 * `tasks/` is rebuilt whole on every start, so what a split no longer exposes is gone.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeJsonDurable } from '../infra/atomic-file';
import { resolveInRegistry } from '../harbor/dataset-ref';
import { isTaskDir } from '../harbor/task-dir';
import { ConfigError } from '../model/errors';
import type { ServeConfig } from '../model/compiled-task/serve-config';

const RESOURCES_DIR = 'tasks';

/** A copy of `from` (a dir or a file) with no symlinks, readable by the optimizer's user (not writable: a+r, a+x kept). */
function copyReadable(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true, filter: (src) => !fs.lstatSync(src).isSymbolicLink() });
  const all = fs.statSync(to).isDirectory() ? fs.readdirSync(to, { recursive: true, encoding: 'utf8' }).map((r) => path.join(to, r)) : [];
  for (const f of [to, ...all]) {
    const st = fs.lstatSync(f);
    fs.chmodSync(f, st.isDirectory() || st.mode & 0o111 ? 0o755 : 0o644);
  }
}

/** The dir of `task` in the task source (a dataset dir, or a single task dir), or null when it is not there. */
function taskDirOf(source: string, task: string): string | null {
  if (isTaskDir(source)) return path.basename(source) === task ? source : null;
  const dir = path.join(source, task);
  const real = fs.existsSync(dir) ? fs.realpathSync(dir) : null;
  return real && path.dirname(real) === fs.realpathSync(source) && !fs.lstatSync(dir).isSymbolicLink() && fs.statSync(real).isDirectory()
    ? real
    : null;
}

type TaskSource = NonNullable<ServeConfig['mode_b']>['task_source'];

/**
 * Where the source's tasks are on this machine: `dirOf(task)`, and the dir whose top-level files are the dataset's
 * own; or why there is no local copy (a dataset Harbor fetches from a registry when a task runs).
 */
function localTasks(src: TaskSource): { dirOf: (task: string) => string | null; root: string | null; label: string } | { absent: string } {
  if ('path' in src) return { dirOf: (task) => taskDirOf(src.path, task), root: isTaskDir(src.path) ? null : src.path, label: src.path };
  if (!src.registry_path)
    return { absent: `${src.dataset} is fetched by Harbor from its registry when a task runs: no local copy of its task files` };
  const { resolved, problems } = resolveInRegistry(src.dataset, src.registry_path);
  if (!resolved) throw new ConfigError(`case resources: ${problems.join('; ')}`);
  const dirs = new Map(resolved.tasks.filter((t) => !t.git_url).map((t) => [t.name, t.path]));
  return { dirOf: (task) => dirs.get(task) ?? null, root: null, label: src.registry_path };
}

/** Writes `tasks/` on the agent volume (removed when no split exposes its resources); returns the splits written. */
export function writeCaseResources(cfg: ServeConfig, log: (line: string) => void): string[] {
  const root = path.join(cfg.paths.agent_volume, RESOURCES_DIR);
  const exposed = cfg.mode_b ? cfg.splits.filter((s) => s.expose_case_resources && s.access !== 'no_access') : [];
  const staging = `${root}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  if (exposed.length) {
    const local = localTasks(cfg.mode_b!.task_source);
    if ('absent' in local) {
      log(`case resources of ${exposed.map((s) => s.split).join(', ')} are not copied: ${local.absent}`);
      fs.rmSync(root, { recursive: true, force: true });
      return [];
    }
    const splits = exposed.map((s) => {
      const names = cfg.mode_b!.partition[s.split] ?? [];
      const cases = names.map((task, caseId) => {
        const dir = local.dirOf(task);
        if (!dir) throw new ConfigError(`case resources of split "${s.split}": task ${task} is not a task dir of ${local.label}`);
        copyReadable(dir, path.join(staging, s.split, 'tasks', task));
        return { case_id: caseId, task_name: task, path: `tasks/${task}` };
      });
      const source = local.root;
      const topFiles =
        source === null ? [] : fs.readdirSync(source, { withFileTypes: true }).filter((e) => e.isFile() && !e.isSymbolicLink());
      for (const f of topFiles) copyReadable(path.join(source!, f.name), path.join(staging, s.split, 'dataset-files', f.name));
      writeJsonDurable(path.join(staging, s.split, 'index.json'), {
        schema_version: 1,
        split: s.split,
        cases,
        dataset_files_path: topFiles.length ? 'dataset-files' : null,
      });
      return { split: s.split, path: s.split, cases: cases.length };
    });
    writeJsonDurable(path.join(staging, 'index.json'), { schema_version: 1, splits });
    fs.chmodSync(staging, 0o755);
  }
  fs.rmSync(root, { recursive: true, force: true });
  if (exposed.length) {
    fs.renameSync(staging, root);
    log(`case resources of ${exposed.map((s) => s.split).join(', ')} are in ${root}`);
  }
  return exposed.map((s) => s.split);
}
