/**
 * An evaluation started as `vero start-eval` starts it: a fixture's config file, its `improved` candidate, on the
 * config's task queue, through a client of the test run's dev server.
 */
import type { Client } from '@temporalio/client';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach, type StartOutcome } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import type { EvalInput } from '../../model/evaluation/input';
import { evalFixture, type EvalFixture } from './fixtures';
import { spawnWorker, type WorkerProcess } from './process';
import { address, client, uniqueQueue } from './temporal';

export interface StartedEvaluation {
  c: Client;
  input: EvalInput;
  evalId: string;
  handle: StartOutcome['handle'];
  /** The evaluation's result, once it has one. */
  result: () => Promise<CandidateResult>;
}

export async function startEvaluation(configFile: string): Promise<StartedEvaluation> {
  const c = await client();
  const cfg = loadEvalConfig(configFile);
  const input = await prepareEvalInput(cfg, 'improved');
  const { handle } = await startOrAttach(c, input, cfg.temporal.task_queue);
  return { c, input, evalId: input.evalId, handle, result: () => handle.result() as Promise<CandidateResult> };
}

/**
 * The evaluation a retry test retries: count-words, hello-world and sum-numbers, one attempt each (a failed run is
 * an error row), on a task queue of its own served by a worker process. `scenario` is the stand-in's.
 */
export function retryFixture(name: string, scenario: unknown, harbor?: Record<string, unknown>): { f: EvalFixture; w: WorkerProcess } {
  const q = uniqueQueue(name);
  const tasks = { names: ['count-words', 'hello-world', 'sum-numbers'] };
  const f = evalFixture({ taskQueue: q, address: address(), tasks, harbor, scenario, execution: { task_attempts: 1 } });
  return { f, w: spawnWorker(address(), q) };
}
