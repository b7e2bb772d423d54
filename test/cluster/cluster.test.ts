/**
 * The production-cluster tier: Temporal server 1.32 on PostgreSQL (test/helpers/cluster.ts), three `vero worker`
 * processes. An evaluation completes; a worker SIGKILLed and the server restarted mid-run change nothing (same
 * result, no finished task re-run); `vero list/best` read SQL visibility.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { getProgress } from '../../client/running-eval';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { Cluster, clusterUnavailable, startCluster } from '../helpers/cluster';
import { evalFixture, ROOT, runsPerTask, tempDir, TASKS } from '../helpers/fixtures';
import { runVero, until } from '../helpers/process';
import { completedTasks } from '../helpers/temporal';

const unavailable = clusterUnavailable();
if (unavailable) console.warn(`\n*** CLUSTER TIER SKIPPED: ${unavailable} ***\n`);
const clusterDescribe = unavailable ? describe.skip : describe;

jest.setTimeout(600_000);

const scenario = {
  tasks: {
    'hello-world': { reward: 1, duration_ms: 2000 },
    'count-words': { reward: 1, duration_ms: 2000 },
    'reverse-string': { reward: 0.5, duration_ms: 2000 },
  },
  default: { reward: 0, duration_ms: 2000 },
};

function worker(address: string, queue: string, privateHome?: string): ChildProcess {
  const log = fs.openSync(path.join(tempDir('vero-cluster-worker-'), 'worker.log'), 'a');
  const vero = [path.join(ROOT, 'bin', 'vero'), 'worker', '--address', address, '--task-queue', queue];
  // A private mount namespace with a tmpfs over the vero home: this worker shares nothing but Temporal.
  const argv = privateHome
    ? ['unshare', '-m', '--propagation', 'private', 'sh', '-c', `mount -t tmpfs tmpfs "$0" && exec "$@"`, privateHome, ...vero]
    : vero;
  const p = spawn(argv[0]!, argv.slice(1), {
    detached: true,
    stdio: ['ignore', log, log],
    env: { ...process.env, VERO_LOG_LEVEL: 'INFO' },
  });
  fs.closeSync(log);
  return p;
}

const stopAll = (ps: ChildProcess[]) => {
  for (const p of ps)
    try {
      process.kill(-p.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
};

clusterDescribe('a production Temporal cluster (PostgreSQL) with three workers', () => {
  let cluster: Cluster;
  let client: Client;
  beforeAll(async () => {
    cluster = await startCluster();
    client = new Client({ connection: await Connection.connect({ address: cluster.address }) });
  }, 300_000);
  afterAll(async () => {
    await client?.connection.close();
    await cluster?.stop();
  });

  test('an evaluation completes through a worker SIGKILL and a server restart, with the uninterrupted result; list/best from SQL visibility', async () => {
    const queue = 'cluster-e2e';
    const f = evalFixture({
      taskQueue: queue,
      address: cluster.address,
      scenario,
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
      execution: { concurrency: 3, heartbeat_timeout: '5s' },
    });
    const workers = [worker(cluster.address, queue), worker(cluster.address, queue), worker(cluster.address, queue)];
    try {
      const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
      await startOrAttach(client, input, queue);
      await until('a task done', async () => (await getProgress(client, input.evalId)).done >= 1, 120_000);
      const disruptedAt = Date.now();
      process.kill(-workers[0]!.pid!, 'SIGKILL');
      await cluster.restartServer();
      const r = (await client.workflow.getHandle(input.evalId).result()) as CandidateResult;
      expect(r.nScored).toBe(6);
      expect(r.score).toBeCloseTo(2.5 / 6);
      const runs = runsPerTask(f.invocationLog);
      expect(Object.keys(runs).sort()).toEqual(TASKS);
      // No task that had finished before the disruption (its runTask completed in the history) ran again;
      // in-flight ones at most once more (usually adopted instead). A harbor that ended just before the kill,
      // whose activity had not completed yet, is in flight: its retry on another worker may run it again.
      const finishedBefore = await completedTasks(client, input.evalId, disruptedAt);
      expect(finishedBefore.length).toBeGreaterThanOrEqual(1);
      for (const t of finishedBefore) expect({ t, runs: runs[t] }).toEqual({ t, runs: 1 });
      expect(Object.values(runs).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(6 + 3);

      const list = await until('the evaluation in SQL visibility', async () => {
        const out = await runVero(['list', '--json', '--all', '--address', cluster.address]);
        const rows = JSON.parse(out.stdout) as { evalId: string; status: string; score: number }[];
        return rows.find((x) => x.evalId === input.evalId && x.status === 'completed');
      });
      expect(list.score).toBeCloseTo(2.5 / 6);
      const best = await runVero(['best', '--json', '-c', f.configFile, '--address', cluster.address]);
      expect(best.code).toBe(0);
      expect((JSON.parse(best.stdout) as { evalId: string }).evalId).toBe(input.evalId);
    } finally {
      stopAll(workers);
    }
  });

  test('workers that share nothing but Temporal (private mount namespaces): the evaluation completes', async () => {
    const queue = 'cluster-share-nothing';
    const f = evalFixture({
      taskQueue: queue,
      address: cluster.address,
      scenario,
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '0' } },
      execution: { concurrency: 3, heartbeat_timeout: '5s' },
    });
    fs.mkdirSync(f.home, { recursive: true });
    const workers = [
      worker(cluster.address, queue, f.home),
      worker(cluster.address, queue, f.home),
      worker(cluster.address, queue, f.home),
    ];
    try {
      const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
      await startOrAttach(client, input, queue);
      const r = (await client.workflow.getHandle(input.evalId).result()) as CandidateResult;
      expect(r.nScored).toBe(6);
      expect(r.score).toBeCloseTo(2.5 / 6);
      expect(r.tasks).toHaveLength(6);
      // Nothing reached this host's view of the home: every file lived in the workers' private tmpfs.
      expect(fs.readdirSync(f.home)).toEqual([]);
    } finally {
      stopAll(workers);
    }
  });
});
