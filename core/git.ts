/** The git operations vero-harbor needs. Every command's exit status is checked. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';

export class GitCommandError extends Error {
  constructor(
    readonly args: string[],
    readonly exitCode: number | undefined,
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed (exit ${exitCode ?? '?'}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  }
}

export async function git(args: string[], cwd?: string): Promise<string> {
  const r = await execa('git', args, { cwd, reject: false, stdin: 'ignore', env: { GIT_TERMINAL_PROMPT: '0' } });
  if (r.failed || r.exitCode !== 0) throw new GitCommandError(args, r.exitCode, String(r.stderr || r.message));
  return String(r.stdout).trim();
}

export async function isGitRepo(dir: string): Promise<boolean> {
  if (!fs.existsSync(dir)) return false;
  try {
    await git(['-C', dir, 'rev-parse', '--git-dir']);
    return true;
  } catch {
    return false;
  }
}

/** The full sha of `ref` as a commit, or null when it does not name one. */
export async function resolveCommit(repo: string, ref: string): Promise<string | null> {
  if (ref.startsWith('-')) return null;
  try {
    const sha = await git(['-C', repo, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
    return /^[0-9a-f]{40}$/.test(sha) ? sha : null;
  } catch {
    return null;
  }
}

/**
 * A detached worktree of `commit` at `dest`. Idempotent: an existing worktree at that commit is reused; a
 * stale or broken one is replaced. Concurrent callers converge on one worktree.
 */
export async function ensureWorktree(repo: string, commit: string, dest: string): Promise<void> {
  if (fs.existsSync(dest)) {
    try {
      if ((await git(['-C', dest, 'rev-parse', 'HEAD'])) === commit) return;
    } catch {
      /* broken: replaced below */
    }
    await git(['-C', repo, 'worktree', 'remove', '--force', dest]).catch(() => undefined);
    fs.rmSync(dest, { recursive: true, force: true });
  }
  await git(['-C', repo, 'worktree', 'prune']);
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  const tmp = `${dest}.tmp-${process.pid}-${Date.now()}`;
  await git(['-C', repo, 'worktree', 'add', '--detach', tmp, commit]);
  try {
    await git(['-C', repo, 'worktree', 'move', tmp, dest]);
  } catch (e) {
    await git(['-C', repo, 'worktree', 'remove', '--force', tmp]).catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
    // Another caller won the race: accept its worktree if it is at the right commit.
    if (fs.existsSync(dest) && (await git(['-C', dest, 'rev-parse', 'HEAD']).catch(() => '')) === commit) return;
    throw e;
  }
}
