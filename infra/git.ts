/**
 * The git operations vero-harbor needs, all through `git()`: exit status checked, no prompt, and no hooks (agent
 * repos are untrusted: nothing of theirs runs on a worker or in the sidecar).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execa } from 'execa';
import { homePaths } from '../model/paths';
import { removeDeadTemps as removeDeadTempsIn, tempPrefixOf } from './dead-temps';
import { GitCommandError } from '../model/errors';

export { GitCommandError };

export interface GitOptions {
  cwd?: string;
  /** Added to the environment (e.g. author and committer). */
  env?: Record<string, string>;
  /** `-c key=value` settings for this command. */
  config?: Record<string, string>;
}

function gitArgv(args: string[], config: Record<string, string> = {}): string[] {
  const settings = { 'core.hooksPath': '/dev/null', ...config };
  return [...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]), ...args];
}

function execGit<E extends 'utf8' | 'buffer'>(args: string[], opts: GitOptions, encoding: E) {
  return execa('git', gitArgv(args, opts.config), {
    cwd: opts.cwd,
    reject: false,
    stdin: 'ignore',
    env: { GIT_TERMINAL_PROMPT: '0', ...opts.env },
    encoding,
    maxBuffer: 2 ** 30,
  });
}

/** Runs git; its stdout, trimmed. Throws GitCommandError on a non-zero exit. */
export async function git(args: string[], opts: GitOptions = {}): Promise<string> {
  const r = await execGit(args, opts, 'utf8');
  if (r.failed || r.exitCode !== 0) throw new GitCommandError(args, r.exitCode, String(r.stderr || r.message));
  return String(r.stdout).trim();
}

/** Runs git for binary output (e.g. `git archive`). */
export async function gitBuffer(args: string[], opts: GitOptions = {}): Promise<Buffer> {
  const r = await execGit(args, opts, 'buffer');
  if (r.failed || r.exitCode !== 0)
    throw new GitCommandError(args, r.exitCode, Buffer.from(r.stderr ?? []).toString('utf8') || (r.message ?? ''));
  return Buffer.from(r.stdout);
}

/** Whether a candidate's checkout is at `worktree` on this host. */
export const isCheckedOut = (worktree: string): boolean => fs.existsSync(worktree);

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
  removeDeadTemps(dest);
  const tmp = tempNameFor(dest);
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

/** `<target>.tmp-<host>-<pid>-<time>`: whose it is, so a later caller can tell a dead one's from a live one's. */
const tempNameFor = (target: string) => `${path.dirname(target)}/${tempPrefixOf(`${path.basename(target)}.tmp-`)}${Date.now()}`;

/**
 * Removes what a process of this host that died mid-clone (or mid-checkout) left next to `target` (a bare clone
 * can be hundreds of MB). Only this host's, and only those whose process is gone: a live one is still writing.
 */
export const removeDeadTemps = (target: string): string[] => removeDeadTempsIn(path.dirname(target), `${path.basename(target)}.tmp-`);

/** Whether `agentRepo` names a remote (`file://`, `https://`, `ssh://`, `git@host:path`) rather than a local path. */
export const isGitUrl = (agentRepo: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(agentRepo) || /^[^/\s]+@[^/\s]+:/.test(agentRepo);

/**
 * This host's own bare copy of the agent repo (`<home>/repos/<digest>.git`), holding `commit`: each worker
 * materializes candidates from its own copy, so workers share nothing but Temporal (and the agent repo's
 * address). Fetches everything the repo offers when `commit` (or, with no commit, anything) is missing.
 */
export async function mirrorOf(agentRepo: string, home: string, commit?: string): Promise<string> {
  const mirror = homePaths(home).mirror(createHash('sha256').update(agentRepo).digest('hex').slice(0, 16));
  if (!fs.existsSync(path.join(mirror, 'HEAD'))) {
    fs.mkdirSync(path.dirname(mirror), { recursive: true });
    removeDeadTemps(mirror);
    const tmp = tempNameFor(mirror);
    await git(['clone', '--bare', '--quiet', '--no-hardlinks', '--', agentRepo, tmp]);
    try {
      fs.renameSync(tmp, mirror);
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      if (!fs.existsSync(path.join(mirror, 'HEAD'))) throw e; // another caller won the race otherwise
    }
  }
  const has = async (c: string) =>
    await git(['-C', mirror, 'cat-file', '-e', `${c}^{commit}`]).then(
      () => true,
      () => false,
    );
  if (commit === undefined || !(await has(commit))) {
    await git(['-C', mirror, 'fetch', '--quiet', '--force', '--tags', '--', agentRepo, '+refs/heads/*:refs/heads/*']);
    if (commit !== undefined && !(await has(commit))) await git(['-C', mirror, 'fetch', '--quiet', '--', agentRepo, commit]);
  }
  return mirror;
}
