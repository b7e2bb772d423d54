/**
 * Copies a commit from the agent's repo into the sidecar's own repo. Each request fetches into a ref unique to
 * it (never the shared FETCH_HEAD), with hooks disabled; the commit is then pinned under refs/vero/candidates.
 */
import { randomUUID } from 'node:crypto';
import { git as runGit, GitCommandError } from '../infra/git';
import { badRequest } from './errors';

/** git in the sidecar's repo, as a result (the caller decides what a failure means to the agent). */
async function git(repo: string, args: string[]): Promise<{ ok: boolean; out: string; err: string }> {
  try {
    return { ok: true, out: await runGit(['-C', repo, ...args], { config: { 'protocol.file.allow': 'always' } }), err: '' };
  } catch (e) {
    if (e instanceof GitCommandError) return { ok: false, out: '', err: e.stderr.trim() };
    throw e;
  }
}

export async function transferCommit(sidecarRepo: string, agentRepo: string, ref: string | undefined): Promise<string> {
  const want = ref ?? 'HEAD';
  if (want.startsWith('-') || /\s/.test(want)) throw badRequest(`"${want}" is not a commit reference`);
  const tmpRef = `refs/vero/tmp/${randomUUID()}`;
  const fetched = await git(sidecarRepo, [
    'fetch',
    '--quiet',
    '--no-tags',
    '--no-recurse-submodules',
    `file://${agentRepo}`,
    `${want}:${tmpRef}`,
  ]);
  if (!fetched.ok) throw badRequest(`commit "${want}" could not be fetched from the agent repo: ${fetched.err.split('\n').at(-1)}`);
  try {
    const sha = await git(sidecarRepo, ['rev-parse', '--verify', `${tmpRef}^{commit}`]);
    if (!sha.ok) throw badRequest(`"${want}" is not a commit`);
    await git(sidecarRepo, ['update-ref', `refs/vero/candidates/${sha.out}`, sha.out]);
    return sha.out;
  } finally {
    await git(sidecarRepo, ['update-ref', '-d', tmpRef]);
  }
}
