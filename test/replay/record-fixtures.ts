/**
 * Records workflow history fixtures for the replay test on a throwaway dev server: a small evaluation (one task
 * retried after an infrastructure error: the parent's and the chunk's histories), an evaluation that continues
 * as new (its first run and its last), one whose concurrency is raised and lowered while it runs (parent and
 * chunk), one a spend pool's cap stops (parent, chunk and the pool), one whose lanes wait for the pool's verdict on
 * their spend (`evaluate-candidate.spend-verdict`: parent, chunk and pool), one cancelled after a concurrency raise
 * (`evaluate-candidate.cancelled`: parent and chunk), one paused with its running task stopped, then resumed
 * (`evaluate-candidate.paused`: parent and chunk), one reset to its first workflow task while its first chunk ran
 * (`evaluate-candidate.reset`: the reset run, its new chunk and its pool), the run of `vero retry` that re-runs one
 * task of a finished evaluation (`evaluate-candidate.retried`), a retry queued while one runs
 * (`evaluate-candidate.retried-running`: the run that queues it and continues as new into the retry run), one whose
 * chunk reports its progress to the parent as tasks finish (`evaluate-candidate.progress-reports`: parent and chunk),
 * one whose lanes start the next task while the last one's harbor tears down (`evaluate-candidate.lane-teardown`:
 * parent and chunk, with the work-done signals and the 'lane-released-at-teardown' and
 * 'teardown-bound-twice-concurrency' patches), a Mode A evaluation (evaluateSamples), a build (buildTask)
 * and a race (raceCandidates and one of its entries, raceEntry), and a race drawn by the first one's disagreement.
 *
 *   npm run record-histories                                  # all of them
 *   npm run record-histories -- evaluate-samples build-task   # only these (keep the others as they are)
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runBuild } from '../../client/build-client';
import { prepareRaceInput, raceResult, startRace } from '../../client/race-client';
import { connect } from '../../client/connection';
import { getProgress, setConcurrency } from '../../client/running-eval';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { pauseEvaluation, resumeEvaluation } from '../../client/pause';
import { retryTasks } from '../../client/retry';
import { evaluateSamples } from '../../workflows';
import { spendPoolWorkflowId } from '../../model/evaluation/spend-cap';
import { startDevServer } from '../../infra/dev-server';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { findTemporalCli } from '../../infra/temporal-cli';
import { PROJECT_ROOT } from '../../infra/package-root';
import { createVeroWorker, installCliRuntimeLogger } from '../../worker/create-worker';
import { LANE_TEARDOWN_PATCH, TEARDOWN_BOUND_PATCH } from '../../workflows/chunk-teardowns';
import { laneTeardownCoverage, type History } from './lane-teardown-history';

async function main(): Promise<void> {
  installCliRuntimeLogger();
  const out = path.join(PROJECT_ROOT, 'test', 'fixtures', 'histories');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-record-'));
  const repo = path.join(tmp, 'agent-repo');
  execFileSync(path.join(PROJECT_ROOT, 'examples', 'make-agent-repo.sh'), [repo], { stdio: 'ignore' });
  const temporal = findTemporalCli();
  const server = await startDevServer({ temporalCli: temporal });
  const taskQueue = 'record-fixtures';
  const { worker, connection } = await createVeroWorker({ address: server.address, namespace: 'default', taskQueue });
  const wanted = process.argv.slice(2);
  const want = (name: string) => wanted.length === 0 || wanted.includes(name);
  const show = (id: string, runId?: string): History => {
    // `temporal workflow show --output json` writes the history JSON that runReplayHistory reads.
    const run = runId ? ['-r', runId] : [];
    const json = execFileSync(temporal, ['workflow', 'show', '--address', server.address, '-w', id, ...run, '--output', 'json'], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    return JSON.parse(json) as History;
  };
  const save = (name: string, id: string, runId?: string) => {
    const history = show(id, runId);
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, `${name}.json`), `${JSON.stringify({ workflowId: id, history }, null, 1)}\n`);
    process.stdout.write(`recorded ${name}.json (${history.events.length} events)\n`);
  };
  try {
    await worker.runUntil(async () => {
      const client = await connect(server.address, 'default');
      if (want('evaluate-candidate') || want('evaluate-chunk')) {
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '0',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({
              tasks: { 'sum-numbers': [{ exception: 'RuntimeError' }, { reward: 1 }] },
              default: { reward: 1 },
            }),
          },
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        await handle.result();
        if (want('evaluate-candidate')) save('evaluate-candidate', input.evalId);
        if (want('evaluate-chunk')) save('evaluate-chunk', `${input.evalId}/chunk-0`);
      }
      if (want('evaluate-candidate.progress-reports')) {
        // Three tasks in one chunk, one errored: the chunk reports its counts to the parent as each finishes.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '0',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-progress'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({ tasks: { 'sum-numbers': { reward: 0 } }, default: { reward: 1 } }),
          },
          'execution.concurrency': 1,
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        await handle.result();
        save('evaluate-candidate.progress-reports', input.evalId);
        save('evaluate-chunk.progress-reports', `${input.evalId}/chunk-0`);
      }
      if (want('evaluate-candidate.lane-teardown') || want('evaluate-chunk.lane-teardown'))
        await recordLaneTeardown({ client, tmp, repo, address: server.address, taskQueue, show, save });
      if (want('evaluate-candidate.continued')) {
        // Three chunks of one task, two per run: the first run continues as new, the second finishes.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'hello-world', 'sum-numbers'],
          'harbor.env': { HARBOR_STANDIN_TIME_SCALE: '0', HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-continued') },
          'execution.chunk_size': 1,
          'execution.chunks_per_run': 2,
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        await handle.result();
        const d = await handle.describe();
        save('evaluate-candidate.continued-first-run', input.evalId, d.raw.workflowExecutionInfo!.firstRunId!);
        save('evaluate-candidate.continued-last-run', input.evalId, d.runId);
      }
      if (want('evaluate-candidate.set-concurrency')) {
        // Four 1-second tasks in one chunk at concurrency 1: raised to 3 once the first runs, then lowered to 1.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'fix-csv-parser', 'hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-concurrency'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({ default: { reward: 1, duration_ms: 1000 } }),
          },
          'execution.concurrency': 1,
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
        while ((await getProgress(client, input.evalId).catch(() => null))?.running !== 1) await sleep(100);
        await setConcurrency(client, input.evalId, 3);
        await sleep(300);
        await setConcurrency(client, input.evalId, 1);
        await handle.result();
        save('evaluate-candidate.set-concurrency', input.evalId);
        save('evaluate-chunk.set-concurrency', `${input.evalId}/chunk-0`);
      }
      if (want('evaluate-candidate.paused')) {
        // Three 2-second tasks at concurrency 1: paused with the first one stopped, resumed once nothing runs.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-paused'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({ default: { reward: 1, duration_ms: 2000 } }),
          },
          'execution.concurrency': 1,
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
        while ((await getProgress(client, input.evalId).catch(() => null))?.running !== 1) await sleep(100);
        await pauseEvaluation(client, input.evalId, { stopRunning: true });
        while ((await getProgress(client, input.evalId))?.running !== 0) await sleep(100);
        await resumeEvaluation(client, input.evalId);
        await handle.result();
        save('evaluate-candidate.paused', input.evalId);
        save('evaluate-chunk.paused', `${input.evalId}/chunk-0`);
      }
      if (want('evaluate-candidate.retried')) {
        // Two tasks, one an error after its one attempt; then `vero retry --errors` runs it again (and it scores).
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '0',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-retried'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({
              tasks: { 'sum-numbers': [{ exception: 'RuntimeError' }, { reward: 1 }] },
              default: { reward: 1 },
            }),
          },
          'harbor.n_attempts': 1,
          'harbor.max_retries': 0,
          'execution.task_attempts': 1,
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        await handle.result();
        const retry = await retryTasks(client, input.evalId, { errors: true });
        await client.workflow.getHandle(input.evalId).result();
        save('evaluate-candidate.retried', input.evalId, retry.runId ?? undefined);
      }
      if (want('evaluate-candidate.retried-running')) {
        // Three tasks at concurrency 1, the first one 2 s long: a retry of one task and of the error rows is queued
        // while it runs; the run continues as new into the retry run once its tasks have finished.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-retried-running'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({
              tasks: { 'count-words': { reward: 1, duration_ms: 2000 }, 'sum-numbers': [{ exception: 'RuntimeError' }, { reward: 1 }] },
              default: { reward: 1 },
            }),
          },
          'execution.concurrency': 1,
          'execution.task_attempts': 1,
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        await startOrAttach(client, input, taskQueue);
        const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
        while ((await getProgress(client, input.evalId).catch(() => null))?.running !== 1) await sleep(100);
        const queued = await retryTasks(client, input.evalId, { tasks: ['hello-world'], errors: true });
        await client.workflow.getHandle(input.evalId).result();
        save('evaluate-candidate.retried-running', input.evalId, queued.previousRunId);
      }
      if (want('evaluate-candidate.spend-cap') || want('spend-pool')) {
        // A spend pool's cap reached by the first task of four (chunks of 2, concurrency 1): the task started
        // meanwhile is stopped after the 1 s grace period, the second chunk never starts, the pool closes.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'fix-csv-parser', 'hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-spend'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({
              tasks: { 'count-words': { reward: 1, cost_usd: 2, duration_ms: 200 } },
              default: { reward: 1, cost_usd: 0.5, duration_ms: 20_000 },
            }),
          },
          'execution.concurrency': 1,
          'execution.chunk_size': 2,
          'execution.max_cost_usd': 1,
          'execution.budget_grace': '1s',
          'execution.spend_pool': 'record',
          'execution.heartbeat_timeout': '2s', // a cancel reaches the activity with its next heartbeat
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        await handle.result();
        const pool = client.workflow.getHandle(spendPoolWorkflowId('record'));
        await pool.result();
        if (want('evaluate-candidate.spend-cap')) {
          save('evaluate-candidate.spend-cap', input.evalId);
          save('evaluate-chunk.spend-cap', `${input.evalId}/chunk-0`);
        }
        if (want('spend-pool')) save('spend-pool', pool.workflowId);
      }
      if (want('evaluate-candidate.spend-verdict')) {
        // Lanes that wait for the spend pool's verdict on their last spend (chunks of 3, concurrency 2, four
        // tasks): one lane goes on in its chunk after a verdict under the cap, one is handed back with its spend
        // and granted to the next chunk after the pool's verdict, and the cap reached then stops both.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'fix-csv-parser', 'hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-verdict'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({
              tasks: {
                'count-words': { reward: 1, cost_usd: 0.4, duration_ms: 200 },
                'fix-csv-parser': { reward: 1, cost_usd: 0.4, duration_ms: 1500 },
              },
              default: { reward: 1, cost_usd: 0.5, duration_ms: 1000 },
            }),
          },
          'execution.concurrency': 2,
          'execution.chunk_size': 3,
          'execution.max_cost_usd': 1,
          'execution.spend_pool': 'record-verdict',
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        await handle.result();
        const pool = client.workflow.getHandle(spendPoolWorkflowId('record-verdict'));
        await pool.result();
        save('evaluate-candidate.spend-verdict', input.evalId);
        save('evaluate-chunk.spend-verdict', `${input.evalId}/chunk-0`);
        save('spend-pool.spend-verdict', pool.workflowId);
      }
      if (want('evaluate-candidate.reset')) {
        // A pooled evaluation reset to its first workflow task (`temporal workflow reset`) while its first chunk
        // runs (patched 'reset-safe-chunks'): the reset run's chunk 0 is refused its id, the old one is cancelled,
        // the new one (`chunk-0.1`) collects the finished task's job; each task's spend counted once in the pool.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'hello-world', 'sum-numbers', 'reverse-string'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-reset'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({ default: { reward: 1, cost_usd: 0.25, duration_ms: 1500 } }),
          },
          'execution.concurrency': 1,
          'execution.chunk_size': 2,
          'execution.max_cost_usd': 100,
          'execution.spend_pool': 'record-reset',
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        await startOrAttach(client, input, taskQueue);
        const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
        while (((await getProgress(client, input.evalId).catch(() => null))?.done ?? 0) < 1) await sleep(100);
        execFileSync(temporal, [
          'workflow',
          'reset',
          '--address',
          server.address,
          '-w',
          input.evalId,
          '-t',
          'FirstWorkflowTask',
          '--reason',
          'record',
        ]);
        await client.workflow.getHandle(input.evalId).result();
        const pool = client.workflow.getHandle(spendPoolWorkflowId('record-reset'));
        await pool.terminate('recorded');
        save('evaluate-candidate.reset', input.evalId);
        save('evaluate-chunk.reset', `${input.evalId}/chunk-0.1`);
        save('spend-pool.reset', pool.workflowId);
      }
      if (want('evaluate-candidate.cancelled')) {
        // Cancelled after its concurrency was raised from 1 to 3 (two lanes granted to the running chunk): the chunk
        // ends only once each of its three activities' cancellation completed.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home'),
          'tasks.names': ['count-words', 'fix-csv-parser', 'hello-world', 'sum-numbers'],
          'harbor.env': {
            HARBOR_STANDIN_TIME_SCALE: '1',
            HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-cancelled'),
            HARBOR_STANDIN_SCENARIO: JSON.stringify({ default: { reward: 1, duration_ms: 60_000 } }),
          },
          'execution.concurrency': 1,
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const input = await prepareEvalInput(cfg, 'improved');
        const { handle } = await startOrAttach(client, input, taskQueue);
        const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
        while ((await getProgress(client, input.evalId).catch(() => null))?.running !== 1) await sleep(100);
        await setConcurrency(client, input.evalId, 3);
        while ((await getProgress(client, input.evalId).catch(() => null))?.running !== 3) await sleep(100);
        await sleep(1000);
        await handle.cancel();
        await handle.result().catch(() => undefined);
        save('evaluate-candidate.cancelled', input.evalId);
        save('evaluate-chunk.cancelled', `${input.evalId}/chunk-0`);
      }
      if (want('evaluate-samples')) {
        const commit = execFileSync('git', ['-C', repo, 'rev-parse', 'improved^{commit}'], { encoding: 'utf8' }).trim();
        const id = `modea-record-${commit}`;
        await client.workflow.execute(evaluateSamples, {
          workflowId: id,
          taskQueue,
          args: [
            {
              id,
              repo,
              commit,
              home: path.join(tmp, 'home'),
              datasetDir: path.join(PROJECT_ROOT, 'examples', 'mode-a', 'dataset'),
              split: 'train',
              ids: [0, 1, 2],
              inference: ['python3', 'infer.py'],
              scorer: { command: ['python3', 'score.py'], cwd: path.join(PROJECT_ROOT, 'examples', 'mode-a', 'scorer') },
              timeoutSec: 120,
            },
          ],
        });
        save('evaluate-samples', id);
      }
      if (want('build-task')) {
        const examples = path.join(tmp, 'examples');
        fs.cpSync(path.join(PROJECT_ROOT, 'examples'), examples, { recursive: true, filter: (s) => !s.includes(`${path.sep}agent-repo`) });
        execFileSync(path.join(examples, 'make-agent-repo.sh'), [path.join(examples, 'agent-repo')], { stdio: 'ignore' });
        const { workflowId } = await runBuild(
          { configFile: path.join(examples, 'mode-b', 'build.yaml'), outDir: path.join(tmp, 'task'), skipSecretCheck: true },
          { client, taskQueue },
        );
        save('build-task', workflowId!);
      }
      if (want('race-candidates') || want('race-entry') || want('race-candidates.history-weighted')) {
        // A race of the two example candidates on the six tasks, a decision after every task: baseline is
        // eliminated once the sequence separates it (or the tasks run out), each candidate's entry finalized.
        const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
          agent_repo: repo,
          home: path.join(tmp, 'home-race'),
          'harbor.env': { HARBOR_STANDIN_TIME_SCALE: '0', HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-race') },
          'temporal.address': server.address,
          'temporal.task_queue': taskQueue,
        });
        const options = { confidence: 0.95, margin: 0, seed: 'fixture', batchSize: 1, onEliminated: 'stop' as const };
        const input = await prepareRaceInput(cfg, ['baseline', 'improved'], options);
        await startRace(client, input, taskQueue);
        await raceResult(client, input.raceId);
        if (want('race-candidates')) save('race-candidates', input.raceId);
        if (want('race-entry')) save('race-entry', input.candidates[1]!.evalId);
        if (want('race-candidates.history-weighted')) {
          // The same two again, drawn by the first race's disagreement (`race-weighted-order`): the weights are in
          // the input, the order and decisions follow from them and the seed.
          const weighted = await prepareRaceInput(cfg, ['baseline', 'improved'], { ...options, seed: 'weighted', historyWeights: true });
          if (!weighted.taskWeights) throw new Error('the first race left no history that weights the tasks');
          await startRace(client, weighted, taskQueue);
          await raceResult(client, weighted.raceId);
          save('race-candidates.history-weighted', weighted.raceId);
        }
      }
    });
  } finally {
    await connection.close();
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

interface RecordContext {
  client: Awaited<ReturnType<typeof connect>>;
  tmp: string;
  repo: string;
  address: string;
  taskQueue: string;
  show: (id: string) => History;
  save: (name: string, id: string) => void;
}

/**
 * Four tasks at concurrency 1, each 300 ms of work and a 1.5 s teardown (time scale 1), the teardown bound left at
 * its default (2 × concurrency): each task's harbor signals work-done, its lane starts the next task while it tears
 * down, and the third waits for the first's teardown to end (the bound). Not saved unless the chunk's history shows
 * it (lane-teardown-history.ts).
 */
async function recordLaneTeardown({ client, tmp, repo, address, taskQueue, show, save }: RecordContext): Promise<void> {
  const cfg = loadEvalConfig(path.join(PROJECT_ROOT, 'examples', 'vero.yaml'), {
    agent_repo: repo,
    home: path.join(tmp, 'home'),
    'tasks.names': ['count-words', 'fix-csv-parser', 'hello-world', 'sum-numbers'],
    'harbor.env': {
      HARBOR_STANDIN_TIME_SCALE: '1',
      HARBOR_STANDIN_STATE_DIR: path.join(tmp, 'state-lane-teardown'),
      HARBOR_STANDIN_SCENARIO: JSON.stringify({ default: { reward: 1, duration_ms: 300 }, teardown_ms: 1500 }),
    },
    'execution.concurrency': 1,
    'temporal.address': address,
    'temporal.task_queue': taskQueue,
  });
  const input = await prepareEvalInput(cfg, 'improved');
  const { handle } = await startOrAttach(client, input, taskQueue);
  await handle.result();
  const chunkId = `${input.evalId}/chunk-0`;
  const seen = laneTeardownCoverage(show(chunkId));
  const patches = [LANE_TEARDOWN_PATCH, TEARDOWN_BOUND_PATCH].filter((p) => !seen.patches.includes(p));
  if (patches.length > 0 || seen.workDone.length === 0 || seen.startedWhileTearingDown.length === 0) {
    throw new Error(`the chunk released no lane at teardown: ${JSON.stringify(seen)}`);
  }
  process.stdout.write(`lane-teardown chunk: ${JSON.stringify(seen)}\n`);
  save('evaluate-candidate.lane-teardown', input.evalId);
  save('evaluate-chunk.lane-teardown', chunkId);
}

void main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
