/**
 * `read_only_paths`: files, directories or globs of the agent repo that a candidate may not change. Pure
 * matching here; the sidecar compares the candidate commit's tree with the baseline's (sidecar/protected-paths).
 *
 * A path is protected when it matches a pattern as a glob (`tests/**`, `*.lock`), equals a pattern, or lies
 * under a pattern that names a directory (`tests` protects `tests/a/b.py`).
 */
import picomatch from 'picomatch';

export function protectedMatcher(patterns: string[]): (path: string) => boolean {
  const cleaned = patterns.map((p) => p.replace(/\/+$/, ''));
  const globs = cleaned.map((p) => picomatch([p, `${p}/**`], { dot: true }));
  return (p) => cleaned.some((pat, i) => p === pat || p.startsWith(`${pat}/`) || globs[i]!(p));
}

export type ChangeKind = 'added' | 'deleted' | 'modified' | 'type changed';

/** Parses `git diff --no-renames --name-status -z` output into (kind, path) pairs. */
export function parseNameStatus(z: string): { kind: ChangeKind; path: string }[] {
  const parts = z.split('\0').filter((s) => s !== '');
  const out: { kind: ChangeKind; path: string }[] = [];
  const kinds: Record<string, ChangeKind> = { A: 'added', D: 'deleted', M: 'modified', T: 'type changed' };
  for (let i = 0; i + 1 < parts.length; i += 2) out.push({ kind: kinds[parts[i]![0]!] ?? 'modified', path: parts[i + 1]! });
  return out;
}
