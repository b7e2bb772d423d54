/**
 * vero's target agent as a Python project. vero runs the nested Harbor as `uv run --project <candidate> --with
 * <harbor_requirement> harbor run …`: the candidate is installed, so its packages import from wherever its project
 * puts them (a src layout's from src/). Here the candidate's checkout is on the nested harbor's PYTHONPATH
 * (harbor.python_path: its src/ for a src layout), and the project's declared dependencies are installed beside the
 * sidecar's Harbor when the task is built (harbor_packages), Harbor itself excepted (harbor_version says which).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { requirementName } from '../model/compiled-task/python-requirement';

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
function projectDependencies(repo: string): string[] {
  try {
    const doc = parseToml(fs.readFileSync(path.join(repo, 'pyproject.toml'), 'utf8')) as { project?: { dependencies?: unknown } };
    const deps = doc.project?.dependencies;
    return Array.isArray(deps) ? deps.filter((d): d is string => typeof d === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * How the project vero would install is set up here: its import roots (harbor.python_path), its dependencies other
 * than Harbor (harbor_packages: installed beside the sidecar's Harbor when the task is built), and the note that
 * says so (null when there is nothing to say).
 */
export function agentProject(
  repo: string,
  importPath: string | null,
  harborVersion: string,
): { pythonPath?: string[]; packages: string[]; note: string | null } {
  const pythonPath = agentPythonPath(repo, importPath);
  const deps = projectDependencies(repo);
  const packages = deps.filter((d) => requirementName(d) !== 'harbor');
  const harbor = deps.filter((d) => requirementName(d) === 'harbor');
  if (!deps.length && !pythonPath) return { pythonPath, packages, note: null };
  const where = pythonPath ? `${pythonPath.join(', ')}/` : 'checkout';
  const parts = [
    `agent_repo: vero installs it as a project (uv run --project); here the candidate's ${where} is on the nested harbor's PYTHONPATH (harbor.python_path)`,
    packages.length
      ? `, its dependencies ${packages.join(', ')} are installed beside the sidecar's Harbor when the task is built (harbor_packages; a candidate's changes to them are not)`
      : '',
    harbor.length ? `, and ${harbor.join(', ')} is the sidecar's Harbor ${harborVersion}` : '',
  ];
  return { pythonPath, packages, note: parts.join('') };
}
