/**
 * Enforces `read_only_paths` on what is evaluated: the candidate commit. Its tree is compared with the
 * baseline commit's (renames seen as a deletion plus an addition, symlinks compared as links, never followed);
 * any change under a protected pattern refuses the candidate.
 */
import { git } from '../infra/git';
import { parseNameStatus, protectedMatcher } from '../model/compiled-task/protected-paths';
import { SidecarError } from './errors';

/** The protected paths the candidate changed, as `path (kind)`; empty when it may be evaluated. */
export async function protectedChanges(repo: string, baseCommit: string, candidate: string, patterns: string[]): Promise<string[]> {
  if (patterns.length === 0 || candidate === baseCommit) return [];
  const diff = await git([
    '-C',
    repo,
    '-c',
    'core.quotePath=false',
    'diff',
    '--no-renames',
    '--no-ext-diff',
    '--name-status',
    '-z',
    baseCommit,
    candidate,
    '--',
  ]);
  const isProtected = protectedMatcher(patterns);
  return parseNameStatus(diff)
    .filter((c) => isProtected(c.path))
    .map((c) => `${c.path} (${c.kind})`);
}

/** 422 naming the paths, before any budget is reserved. */
function refusal(commit: string, changes: string[]): SidecarError {
  const shown = changes.slice(0, 20).join(', ') + (changes.length > 20 ? `, … (${changes.length} in all)` : '');
  return new SidecarError(
    422,
    `candidate ${commit.slice(0, 12)} changes read-only path(s): ${shown}; it is not evaluated and no budget was spent`,
  );
}

/** Refuses (422) a candidate that changed a read-only path, before anything is reserved or recorded. */
export async function refuseProtectedChanges(
  cfg: { repo_path: string; base_commit: string; read_only_paths: string[] },
  commit: string,
  route: string,
  log: (line: string) => void,
): Promise<void> {
  const changes = await protectedChanges(cfg.repo_path, cfg.base_commit, commit, cfg.read_only_paths);
  if (changes.length === 0) return;
  log(`${route}: refused candidate ${commit}: it changes read-only path(s) ${changes.join(', ')}`);
  throw refusal(commit, changes);
}
