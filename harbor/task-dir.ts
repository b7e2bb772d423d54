/**
 * Harbor 0.25's `Task.is_valid_dir`, with the reason when a dir is not a task. Shared by vero's task listing
 * and the Harbor stand-in, so both see the datasets real Harbor sees:
 *
 *   <task>/task.toml                       parses; `[task] name`, when present, is `org/name`
 *   <task>/environment/                    or `[environment] docker_image = "…"`
 *   <task>/instruction.md                  single-step tasks
 *   <task>/tests/test.sh                   (test.bat when `[environment] os = "windows"`)
 *   <task>/steps/<name>/instruction.md     multi-step tasks (`[[steps]] name = …`, no root instruction.md);
 *   <task>/steps/<name>/tests/test.sh      each step's tests, or the shared tests/test.sh
 *
 * A `[verifier] environment` that bundles its own tests needs no test script, as in Harbor.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';

interface TaskToml {
  task?: { name?: unknown };
  environment?: { docker_image?: unknown; os?: unknown };
  verifier?: { environment?: unknown };
  steps?: { name?: unknown }[];
}

const TASK_NAME = /^[a-zA-Z0-9][a-zA-Z0-9._-]*\/[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
const isFile = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isFile() === true;
/** Path.is_dir(): follows symlinks; false for a broken link or a loop (Python swallows the OSError). */
const isDir = (p: string): boolean => {
  try {
    return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
};

/** Why `dir` is not a Harbor task dir, or null when it is one. */
export function notATaskBecause(dir: string, opts: { verificationDisabled?: boolean } = {}): string | null {
  const tomlFile = path.join(dir, 'task.toml');
  if (!isFile(tomlFile)) return 'no task.toml';
  let toml: TaskToml;
  try {
    toml = parseToml(fs.readFileSync(tomlFile, 'utf8')) as TaskToml;
  } catch (e) {
    return `task.toml does not parse (${(e as Error).message.split('\n')[0]})`;
  }
  const name = toml.task?.name;
  if (name !== undefined && (typeof name !== 'string' || !TASK_NAME.test(name)))
    return `[task] name ${JSON.stringify(name)} is not org/name`;
  if (!toml.environment?.docker_image && !isDir(path.join(dir, 'environment'))) {
    return 'no environment/ dir and no [environment] docker_image';
  }
  const testScript = toml.environment?.os === 'windows' ? 'test.bat' : 'test.sh';
  const bundledTests = toml.verifier?.environment !== undefined;
  const steps = Array.isArray(toml.steps) ? toml.steps : [];
  if (steps.length === 0) {
    if (!isFile(path.join(dir, 'instruction.md'))) return 'no instruction.md';
    if (opts.verificationDisabled || bundledTests) return null;
    return isFile(path.join(dir, 'tests', testScript)) ? null : `no tests/${testScript}`;
  }
  for (const step of steps) {
    if (typeof step.name !== 'string' || !step.name || step.name.includes('/') || step.name.startsWith('.')) {
      return `[[steps]] name ${JSON.stringify(step.name)} is not a directory name`;
    }
    const stepDir = path.join(dir, 'steps', step.name);
    if (!isFile(path.join(stepDir, 'instruction.md'))) return `no steps/${step.name}/instruction.md`;
    if (opts.verificationDisabled || bundledTests) continue;
    if (!isFile(path.join(stepDir, 'tests', testScript)) && !isFile(path.join(dir, 'tests', testScript))) {
      return `no steps/${step.name}/tests/${testScript} and no shared tests/${testScript}`;
    }
  }
  return null;
}

export const isTaskDir = (dir: string, opts: { verificationDisabled?: boolean } = {}): boolean => notATaskBecause(dir, opts) === null;

export interface DatasetListing {
  /** Task dir basenames, sorted (Harbor sorts `Path.iterdir()`; dot-named dirs included, as in Harbor). */
  tasks: string[];
  /** Dirs of the dataset that are not tasks, each with the reason. Never dropped silently. */
  skipped: { dir: string; reason: string }[];
}

/** The task dirs directly inside a dataset dir, the way `harbor run -p DATASET` finds them. */
export function listDataset(datasetDir: string, opts: { verificationDisabled?: boolean } = {}): DatasetListing {
  const out: DatasetListing = { tasks: [], skipped: [] };
  const entries = fs.readdirSync(datasetDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    // Harbor follows a symlinked task dir and runs it.
    if (!(e.isDirectory() || (e.isSymbolicLink() && isDir(path.join(datasetDir, e.name))))) continue;
    const reason = notATaskBecause(path.join(datasetDir, e.name), opts);
    if (reason === null) out.tasks.push(e.name);
    else out.skipped.push({ dir: e.name, reason });
  }
  return out;
}
