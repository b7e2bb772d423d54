/**
 * vero's target agent as a Python project. vero runs the nested Harbor as `uv run --project <candidate> --with
 * <harbor_requirement> harbor run …`: the candidate is installed, so its packages import from wherever its project
 * puts them (a src layout's from src/). Here the candidate's checkout is on the nested harbor's PYTHONPATH
 * (harbor.python_path: its src/ for a src layout) and the sidecar's Harbor environment provides the imports; the
 * project's declared dependencies are named in a note, never installed silently or dropped silently.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';

/** The top-level module of `module.path:Class` (null for a built-in agent name). */
const topModule = (importPath: string): string | null => (importPath.includes(':') ? importPath.split(':')[0]!.split('.')[0]! : null);

const holdsModule = (dir: string, name: string): boolean =>
  fs.existsSync(path.join(dir, name)) || fs.existsSync(path.join(dir, `${name}.py`));

/** `["src"]` when the agent's module is in the repo's src/ and not at its root (a src layout); else undefined (the root). */
export function agentPythonPath(repo: string, importPath: string | null): string[] | undefined {
  const top = importPath ? topModule(importPath) : null;
  if (!top || holdsModule(repo, top) || !holdsModule(path.join(repo, 'src'), top)) return undefined;
  return ['src'];
}

/** The `[project] dependencies` of the repo's pyproject.toml ([] when it has none or cannot be read). */
export function projectDependencies(repo: string): string[] {
  try {
    const doc = parseToml(fs.readFileSync(path.join(repo, 'pyproject.toml'), 'utf8')) as { project?: { dependencies?: unknown } };
    const deps = doc.project?.dependencies;
    return Array.isArray(deps) ? deps.filter((d): d is string => typeof d === 'string') : [];
  } catch {
    return [];
  }
}

/** The note for an agent project vero would install: where its code imports from, and what provides its dependencies. */
export function agentProjectNote(repo: string, pythonPath: string[] | undefined, harborVersion: string): string | null {
  const deps = projectDependencies(repo);
  if (!deps.length && !pythonPath) return null;
  return [
    `agent_repo: vero installs it as a project (uv run --project); here the candidate's ${pythonPath ? `${pythonPath.join(', ')}/` : 'checkout'} is on the nested harbor's PYTHONPATH (harbor.python_path)`,
    deps.length
      ? ` and its dependencies (${deps.join(', ')}) are not installed: its imports come from the sidecar's Harbor ${harborVersion} environment`
      : '',
  ].join('');
}
