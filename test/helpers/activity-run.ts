/**
 * The task activity run outside a workflow, as a chunk's lane runs it: a fixture's evaluation input (no server:
 * the fixture's task queue and address are never used), its candidate prepared by prepareCandidate, and a run dir
 * in which `attempt` runs one task's runTask.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { prepareCandidate, type PreparedCandidate } from '../../activities/prepare-candidate';
import { runTask } from '../../activities/run-task';
import { prepareEvalInput } from '../../client/eval-input';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { TaskResult } from '../../model/evaluation/task-result';
import { evalFixture, tempDir } from './fixtures';

export async function activityRun(
  fixture: Omit<Parameters<typeof evalFixture>[0], 'taskQueue' | 'address'>,
  runDirPrefix: string,
): Promise<{ runDir: string; attempt: (task: string) => Promise<TaskResult> }> {
  const f = evalFixture({ taskQueue: 'unused', address: '127.0.0.1:1', ...fixture });
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  const env = new MockActivityEnvironment();
  const { worktree } = (await env.run(prepareCandidate, {
    agentRepo: input.agentRepo,
    candidate: input.candidate,
    home: input.home,
  })) as PreparedCandidate;
  const runDir = tempDir(runDirPrefix);
  const attempt = async (task: string) => (await env.run(runTask, { runDir, task, worktree, settings: input.settings })) as TaskResult;
  return { runDir, attempt };
}
