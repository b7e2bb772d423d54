import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/failures';
import { ensureWorktree, GitCommandError, isGitRepo, resolveCommit } from '../core/git';
import { checkHome } from '../core/home-dir';
import { withHeartbeat } from './heartbeat';

export interface PrepareCandidateInput {
  agentRepo: string;
  candidate: string;
  home: string;
}

export interface PreparedCandidate {
  commit: string;
  worktree: string;
}

/** Resolves the candidate to a commit and materializes its worktree (keyed by sha; idempotent). */
export async function prepareCandidate(input: PrepareCandidateInput): Promise<PreparedCandidate> {
  return withHeartbeat(() => prepare(input));
}

async function prepare(input: PrepareCandidateInput): Promise<PreparedCandidate> {
  try {
    checkHome(input.home);
  } catch (e) {
    throw ApplicationFailure.nonRetryable((e as Error).message, FailureType.InvalidInput);
  }
  if (!(await isGitRepo(input.agentRepo))) {
    throw ApplicationFailure.nonRetryable(
      `agent repo ${input.agentRepo} does not exist or is not a git repository`,
      FailureType.AgentRepoNotFound,
    );
  }
  const commit = await resolveCommit(input.agentRepo, input.candidate);
  if (!commit) {
    throw ApplicationFailure.nonRetryable(
      `candidate "${input.candidate}" is not a commit of ${input.agentRepo}`,
      FailureType.CandidateNotFound,
    );
  }
  const worktree = path.join(input.home, 'worktrees', commit);
  try {
    await ensureWorktree(input.agentRepo, commit, worktree);
  } catch (e) {
    if (e instanceof GitCommandError) throw ApplicationFailure.retryable(e.message, FailureType.GitError);
    throw e;
  }
  return { commit, worktree };
}
