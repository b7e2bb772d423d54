import type { PrepareCandidateInput, PreparedCandidate } from '../model/evaluation/activity-payloads';
import { FailureType } from '../model/failures';
import { ensureWorktree, isGitRepo, isGitUrl, mirrorOf, resolveCommit } from '../infra/git';
import { checkHome } from '../infra/home-dir';
import { withHeartbeat } from './heartbeat';
import { homePaths } from '../model/paths';
import { asActivityFailure, typedFailure } from '../model/errors';

export type { PrepareCandidateInput, PreparedCandidate };

/** Resolves the candidate to a commit and materializes its worktree (keyed by sha; idempotent). */
export async function prepareCandidate(input: PrepareCandidateInput): Promise<PreparedCandidate> {
  return withHeartbeat(() => prepare(input));
}

async function prepare(input: PrepareCandidateInput): Promise<PreparedCandidate> {
  try {
    checkHome(input.home);
  } catch (e) {
    throw typedFailure(FailureType.InvalidInput, (e as Error).message);
  }
  if (!isGitUrl(input.agentRepo) && !(await isGitRepo(input.agentRepo))) {
    throw typedFailure(FailureType.AgentRepoNotFound, `agent repo ${input.agentRepo} does not exist or is not a git repository`);
  }
  let mirror: string;
  try {
    mirror = await mirrorOf(input.agentRepo, input.home, /^[0-9a-f]{40}$/.test(input.candidate) ? input.candidate : undefined);
  } catch (e) {
    throw asActivityFailure(e); // GitCommandError: retryable, type GitError
  }
  const commit = await resolveCommit(mirror, input.candidate);
  if (!commit) {
    throw typedFailure(FailureType.CandidateNotFound, `candidate "${input.candidate}" is not a commit of ${input.agentRepo}`);
  }
  return { commit, worktree: await materializeCandidate(input.agentRepo, commit, input.home) };
}

/**
 * The candidate's checkout on this host, `<home>/worktrees/<commit>`, made from this host's copy of the agent
 * repo when missing: any activity can run on any worker.
 */
export async function materializeCandidate(agentRepo: string, commit: string, home: string): Promise<string> {
  const worktree = homePaths(home).worktree(commit);
  try {
    await ensureWorktree(await mirrorOf(agentRepo, home, commit), commit, worktree);
  } catch (e) {
    throw asActivityFailure(e); // GitCommandError: retryable, type GitError
  }
  return worktree;
}
