/**
 * The baseline repo of a compiled task: a commit of the agent repo (`agent_ref`, default HEAD; a subdirectory of it when
 * agent_repo points inside a repo), as a fresh one-commit repo whose sha is reproducible.
 *
 * `git archive` is buffered and its exit status checked before anything is extracted (vero.md §6.1 #4): the
 * git error is the one reported. Every tar member is checked before extraction: absolute paths, `..`, and
 * links that point outside the tree are refused, not rewritten.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import { ConfigError } from '../model/errors';
import { git, gitBuffer } from '../infra/git';

/** A baseline that cannot be built from the agent repo: bad input, reported like any config error. */
class BaselineError extends ConfigError {}

interface SourceCommit {
  sha: string;
  /** Author and committer dates, reused so the baseline commit is reproducible. */
  authorDate: string;
  committerDate: string;
}

async function archive(root: string, treeish: string): Promise<Buffer> {
  try {
    return await gitBuffer(['-C', root, 'archive', '--format=tar', treeish]);
  } catch (e) {
    throw new BaselineError((e as Error).message);
  }
}

function escapes(memberPath: string): boolean {
  return path.isAbsolute(memberPath) || memberPath.split(/[/\\]/).includes('..');
}

/** Lists the archive and refuses unsafe members. Returns the number of files. */
async function checkMembers(buf: Buffer): Promise<number> {
  const problems: string[] = [];
  let files = 0;
  await pipeline(
    Readable.from(buf),
    tar.t({
      onReadEntry: (entry) => {
        const p = entry.path;
        if (escapes(p)) problems.push(`${p}: path escapes the baseline`);
        if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
          const target = entry.linkpath ?? '';
          const resolved = entry.type === 'Link' ? target : path.join(path.dirname(p), target);
          if (path.isAbsolute(target) || escapes(path.normalize(resolved)))
            problems.push(`${p} -> ${target}: link points outside the baseline`);
        }
        if (entry.type === 'File' || entry.type === 'OldFile' || entry.type === 'ContiguousFile') files++;
        entry.resume();
      },
    }),
  );
  if (problems.length) throw new BaselineError(`refusing to extract the agent repo archive: ${problems.slice(0, 5).join('; ')}`);
  return files;
}

async function sourceCommit(root: string, ref: string): Promise<SourceCommit> {
  const out = await git(['-C', root, 'log', '-1', '--format=%H%n%aI%n%cI', `${ref}^{commit}`, '--']).catch((e: Error) => {
    throw new BaselineError(
      ref === 'HEAD' ? `agent_repo has no committed HEAD: ${e.message}` : `agent_ref: "${ref}" is not a commit of agent_repo: ${e.message}`,
    );
  });
  const [sha, authorDate, committerDate] = out.split('\n') as [string, string, string];
  return { sha, authorDate, committerDate };
}

export interface Baseline {
  commit: string;
  source: SourceCommit;
  files: number;
}

/** Writes the baseline repo into `dest` (which must not exist) and returns its commit. */
export async function buildBaseline(agentRepo: string, dest: string, ref = 'HEAD'): Promise<Baseline> {
  if (!fs.existsSync(agentRepo)) throw new ConfigError(`agent_repo: ${agentRepo} does not exist`);
  let root: string;
  try {
    root = await git(['-C', agentRepo, 'rev-parse', '--show-toplevel']);
  } catch {
    throw new ConfigError(`agent_repo: ${agentRepo} is not inside a git repository (its committed HEAD is the baseline)`);
  }
  const rel = path.relative(fs.realpathSync(root), fs.realpathSync(agentRepo)).split(path.sep).join('/');
  const source = await sourceCommit(root, ref);
  const treeish = rel ? `${source.sha}:${rel}` : source.sha;
  const buf = await archive(root, treeish);
  const files = await checkMembers(buf);
  if (files === 0) throw new BaselineError(`git archive of ${treeish} in ${root} contains no files`);
  fs.mkdirSync(dest, { recursive: false });
  await pipeline(Readable.from(buf), tar.x({ cwd: dest, strict: true, preservePaths: false }));
  const env = {
    GIT_AUTHOR_NAME: 'vero',
    GIT_AUTHOR_EMAIL: 'vero@localhost',
    GIT_COMMITTER_NAME: 'vero',
    GIT_COMMITTER_EMAIL: 'vero@localhost',
    GIT_AUTHOR_DATE: source.authorDate,
    GIT_COMMITTER_DATE: source.committerDate,
  };
  const run = async (args: string[]) => {
    try {
      return await git(['-C', dest, ...args], { env, config: { 'commit.gpgsign': 'false' } });
    } catch (e) {
      throw new BaselineError(`in the baseline: ${(e as Error).message}`);
    }
  };
  await run(['init', '-q', '-b', 'main']);
  await run(['add', '-A']);
  await run(['commit', '-q', '-m', `baseline from ${source.sha}${rel ? ` (${rel})` : ''}`]);
  // The index holds file times and inode numbers: without it the task dir is the same bytes at every build.
  // The sidecar's image and main's seed script make it again from the commit.
  fs.rmSync(path.join(dest, '.git', 'index'));
  return { commit: await run(['rev-parse', 'HEAD']), source, files };
}
