/**
 * The evaluation workflows on the test run's dev server with Harbor-facing activities replaced: the candidate is a
 * commit (no git), no preflight, and a function answers each task; the workflows and the results activities are
 * the real ones.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { RunTaskInput } from '../../activities/run-task';
import { evalInputFor } from '../../client/eval-input';
import type { EvalInput, EvalSettings } from '../../model/evaluation/input';
import { HarborSection } from '../../model/harbor/config';
import type { TaskResult } from '../../model/evaluation/task-result';
import { tempDir } from './fixtures';
import { address, quietRuntime, uniqueQueue, workflowBundle } from './temporal';

/** An evaluation's settings for the oracle agent on a dataset no activity reads, with `over` on top. */
export function mockedSettings(over: Partial<EvalSettings> = {}): EvalSettings {
  return {
    harbor: HarborSection.parse({ agent: 'oracle' }),
    source: { path: '/nonexistent/dataset' },
    rewardKey: null,
    aggregate: 'best',
    errorRateThreshold: 0.5,
    concurrency: 4,
    taskTimeoutSec: 60,
    taskAttempts: 2,
    heartbeatTimeoutSec: 10,
    chunkSize: 500,
    preflight: false,
    ...over,
  };
}

/** A task's scored row, of one trial, as runTask returns it. */
export const scoredRow = (task: string, score: number, input: RunTaskInput): TaskResult => ({
  task,
  status: 'scored',
  score,
  metrics: { reward: score },
  trial: `${task}__x`,
  taskName: task,
  nTrials: 1,
  runs: 1,
  exceptions: [],
  timedOut: false,
  jobDir: `${input.runDir}/jobs/${task}`,
  error: null,
});

export interface MockedHarborWorker {
  q: string;
  worker: Worker;
  /** The worker's connection: close it when done. */
  connection: NativeConnection;
  /** The evaluation of `commit` (candidate `candidateRef`) of `tasks` under `settings`. */
  input: EvalInput;
}

/** A worker on a task queue of its own whose runTask is `runTask`, and the input of an evaluation for it. */
export async function mockedHarborWorker(opts: {
  name: string;
  commit: string;
  candidateRef: string;
  tasks: string[];
  settings: EvalSettings;
  runTask: (input: RunTaskInput) => Promise<TaskResult>;
}): Promise<MockedHarborWorker> {
  quietRuntime();
  const q = uniqueQueue(opts.name);
  const home = tempDir(`vero-${opts.name}-`);
  const connection = await NativeConnection.connect({ address: address() });
  const worker = await Worker.create({
    connection,
    taskQueue: q,
    workflowBundle: await workflowBundle(),
    activities: {
      ...createActivities(),
      prepareCandidate: async () => ({ commit: opts.commit, worktree: `${home}/worktrees/${opts.commit}` }),
      preflightHarbor: async () => ({ message: 'mocked' }),
      runTask: opts.runTask,
    },
  });
  const { commit, candidateRef, tasks, settings } = opts;
  const input = evalInputFor({ commit, candidateRef, agentRepo: '/nonexistent/repo', home, tasks, settings });
  return { q, worker, connection, input };
}
