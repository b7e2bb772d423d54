/**
 * Copies a commit from the agent's repo into the sidecar's own repo. Each request fetches into a ref unique to
 * it (never the shared FETCH_HEAD), with hooks disabled; the commit is then pinned under refs/vero/candidates.
 *
 * The agent's repo belongs to another user (the `agent` user of `main`, on a volume the sidecar mounts
 * read-only), so git's ownership check would refuse to read it: a global config of the sidecar's own, naming
 * only that repo, marks it safe. Nothing of the agent's repo runs: upload-pack reads its objects, hooks are off,
 * and the settings that could run commands are honoured only from protected (system/global) config.
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { writeFileDurable } from '../infra/atomic-file';
import { git as runGit, GitCommandError } from '../infra/git';
import { badRequest } from './errors';

/** A git global config file, kept in the sidecar's own repo, that marks exactly `repo` as safe to read. */
function trustConfigFor(sidecarRepo: string, repo: string): string {
  const file = path.join(sidecarRepo, '.git', 'vero-agent-repo.gitconfig');
  const dir = path.resolve(repo);
  const value = (p: string) => `"${p.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  // Atomic: a concurrent fetch reads the old file or the new one, which are the same.
  writeFileDurable(file, `[safe]\n\tdirectory = ${value(dir)}\n\tdirectory = ${value(path.join(dir, '.git'))}\n`, { mode: 0o600 });
  return file;
}

/** git in the sidecar's repo, as a result (the caller decides what a failure means to the agent). */
async function git(repo: string, args: string[], agentRepo?: string): Promise<{ ok: boolean; out: string; err: string }> {
  try {
    const env = agentRepo ? { GIT_CONFIG_GLOBAL: trustConfigFor(repo, agentRepo) } : undefined;
    return { ok: true, out: await runGit(['-C', repo, ...args], { config: { 'protocol.file.allow': 'always' }, env }), err: '' };
  } catch (e) {
    if (e instanceof GitCommandError) return { ok: false, out: '', err: e.stderr.trim() };
    throw e;
  }
}

/** A ref as git fetches it, and the ancestry suffix (`~N`, `^N`) applied after the fetch: `HEAD~1` is HEAD, `~1`. */
export function splitAncestry(ref: string): { base: string; suffix: string } {
  const m = /^(.+?)((?:[~^]\d*)*)$/.exec(ref)!;
  return { base: m[1]!, suffix: m[2]! };
}

export async function transferCommit(sidecarRepo: string, agentRepo: string, ref: string | undefined): Promise<string> {
  const want = ref ?? 'HEAD';
  // No option-like refs, no whitespace or control characters (a NUL cannot even reach git's argv).
  // eslint-disable-next-line no-control-regex
  if (want.startsWith('-') || /[\s\x00-\x1f\x7f]/.test(want)) throw badRequest(`${JSON.stringify(want)} is not a commit reference`);
  const tmpRef = `refs/vero/tmp/${randomUUID()}`;
  const fetched = await git(
    sidecarRepo,
    ['fetch', '--quiet', '--no-tags', '--no-recurse-submodules', `file://${agentRepo}`, `${splitAncestry(want).base}:${tmpRef}`],
    agentRepo,
  );
  if (!fetched.ok) throw badRequest(`commit "${want}" could not be fetched from the agent repo: ${fetched.err.split('\n').at(-1)}`);
  try {
    // The ancestry is resolved here, in the sidecar's own repo: nothing of the agent's repo runs.
    const sha = await git(sidecarRepo, ['rev-parse', '--verify', '--quiet', `${tmpRef}${splitAncestry(want).suffix}^{commit}`]);
    if (!sha.ok) throw badRequest(`"${want}" is not a commit`);
    await git(sidecarRepo, ['update-ref', `refs/vero/candidates/${sha.out}`, sha.out]);
    return sha.out;
  } finally {
    await git(sidecarRepo, ['update-ref', '-d', tmpRef]);
  }
}
