/**
 * Copies a commit from the agent's repo into the sidecar's own repo. Each request fetches into a ref unique to
 * it (never the shared FETCH_HEAD), with hooks disabled; the commit is then pinned under refs/vero/candidates.
 */
import { randomUUID } from 'node:crypto';
import { execa } from 'execa';
import { badRequest } from './errors';

async function git(repo: string, args: string[]): Promise<{ ok: boolean; out: string; err: string }> {
  const r = await execa('git', ['-c', 'core.hooksPath=/dev/null', '-c', 'protocol.file.allow=always', '-C', repo, ...args], {
    reject: false,
    stdin: 'ignore',
    env: { GIT_TERMINAL_PROMPT: '0' },
  });
  return { ok: r.exitCode === 0, out: String(r.stdout).trim(), err: String(r.stderr).trim() };
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
