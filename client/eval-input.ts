/**
 * An evaluation's workflow input: the settings from a config (defaults from the schema), the candidate's commit
 * and the tasks, checked before anything starts; its id is the commit plus the digest of tasks and settings.
 */
import type { EvalConfig } from '../model/evaluation/config';
import { configDigest, evalWorkflowId } from '../model/evaluation/identity';
import { EvalInput, type EvalSettings } from '../model/evaluation/input';
import { ConfigError } from '../model/errors';
import { chunksPerRun, inputSizeProblem } from '../model/evaluation/history-bounds';
import { git, isGitRepo, resolveCommit } from '../infra/git';
import { checkHome } from '../infra/home-dir';
import { resolveTaskSelection } from '../harbor/task-source';

export function settingsFrom(cfg: EvalConfig): EvalSettings {
  return {
    harbor: cfg.harbor,
    source: cfg.tasks.source,
    rewardKey: cfg.scoring.reward_key ?? null,
    aggregate: cfg.scoring.aggregate,
    errorRateThreshold: cfg.scoring.error_rate_threshold,
    concurrency: cfg.execution.concurrency,
    taskTimeoutSec: cfg.execution.task_timeout,
    taskAttempts: cfg.execution.task_attempts,
    heartbeatTimeoutSec: cfg.execution.heartbeat_timeout,
    chunkSize: cfg.execution.chunk_size,
    ...(cfg.execution.chunks_per_run !== undefined ? { chunksPerRun: cfg.execution.chunks_per_run } : {}),
    stopGraceSec: cfg.execution.stop_grace,
    ...(cfg.execution.teardown_concurrency !== undefined ? { teardownConcurrency: cfg.execution.teardown_concurrency } : {}),
    preflight: cfg.execution.preflight,
    ...spendCapFrom(cfg.execution),
  };
}

function spendCapFrom(e: EvalConfig['execution']): Pick<EvalSettings, 'spendCap'> {
  if (e.max_cost_usd === undefined && e.max_tokens === undefined) return {};
  return {
    spendCap: {
      ...(e.max_cost_usd !== undefined ? { maxCostUsd: e.max_cost_usd } : {}),
      ...(e.max_tokens !== undefined ? { maxTokens: e.max_tokens } : {}),
      ...(e.budget_grace !== undefined ? { graceSec: e.budget_grace } : {}),
      ...(e.spend_pool !== undefined ? { pool: e.spend_pool } : {}),
    },
  };
}

/** The workflow input for a commit, tasks and settings: its id is the commit plus the digest of tasks and settings. */
export function evalInputFor(
  parts: { commit: string } & Pick<EvalInput, 'candidateRef' | 'agentRepo' | 'home' | 'tasks' | 'settings' | 'skippedDirs'>,
): EvalInput {
  const problem = inputSizeProblem(parts.tasks);
  if (problem) throw new ConfigError(`tasks: ${problem}`);
  // Chunks per run are fixed when the evaluation starts, so a later change of the default cannot change how a
  // running evaluation replays. Its chunks report their progress to it (the Web UI's details).
  const s = parts.settings;
  const metered = s.spendCap ? { chunkSize: s.chunkSize, pooled: s.spendCap.pool !== undefined } : undefined;
  const settings = { ...s, chunksPerRun: s.chunksPerRun ?? chunksPerRun(s.concurrency, undefined, metered, true) };
  const digest = configDigest(parts.tasks, settings);
  return EvalInput.parse({
    evalId: evalWorkflowId(parts.commit, digest),
    candidate: parts.commit,
    candidateRef: parts.candidateRef,
    agentRepo: parts.agentRepo,
    home: parts.home,
    tasks: parts.tasks,
    configDigest: digest,
    settings,
    ...(parts.skippedDirs ? { skippedDirs: parts.skippedDirs } : {}),
  });
}

/** Validates everything that can be checked before starting (home, repo, candidate, tasks); the workflow input. */
export async function prepareEvalInput(cfg: EvalConfig, candidateRef: string): Promise<EvalInput> {
  checkHome(cfg.home);
  if (!(await isGitRepo(cfg.agent_repo))) throw new ConfigError(`agent_repo: ${cfg.agent_repo} does not exist or is not a git repository`);
  const commit = await resolveCommit(cfg.agent_repo, candidateRef);
  if (!commit) throw new ConfigError(`--candidate: "${candidateRef}" is not a commit of ${cfg.agent_repo}`);
  const { tasks, skipped } = resolveTaskSelection(cfg);
  return evalInputFor({
    commit,
    candidateRef,
    agentRepo: cfg.agent_repo,
    home: cfg.home,
    tasks,
    settings: settingsFrom(cfg),
    skippedDirs: skipped,
  });
}

/**
 * A note when the candidate is the commit checked out in the agent repo and that checkout has uncommitted
 * changes to tracked files: what is evaluated is the commit, not the edits (null otherwise, or not a work tree).
 */
export async function uncommittedNote(agentRepo: string, candidateRef: string, commit: string): Promise<string | null> {
  try {
    if ((await git(['rev-parse', 'HEAD'], { cwd: agentRepo })) !== commit) return null;
    const changed = (await git(['status', '--porcelain', '--untracked-files=no'], { cwd: agentRepo })).split('\n').filter(Boolean);
    if (!changed.length) return null;
    return `note: ${agentRepo} has uncommitted changes to ${changed.length} file(s); the committed ${candidateRef} (${commit.slice(0, 12)}) is what is evaluated, not your edits: commit them to evaluate them`;
  } catch {
    return null; // a bare repo or a URL: nothing checked out
  }
}
