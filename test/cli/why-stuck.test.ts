/**
 * Why an evaluation is not moving, said by `vero status` and `start-eval --wait` from what Temporal knows: the
 * preflight's failure while it is retried (a Docker engine that is down), and no worker polling its task queue.
 * The real CLI, a real worker, a harbor whose every run finds no Docker daemon.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { evalFixture, tempDir } from '../helpers/fixtures';
import { runVero, spawnWorker, until, VERO } from '../helpers/process';
import { address, client, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(180_000);

const DOCKER_DOWN = 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?';

async function terminate(evalId: string): Promise<void> {
  const c = await client();
  await c.workflow
    .getHandle(evalId)
    .terminate('test over')
    .catch(() => undefined);
  await c.connection.close();
}

test('no worker: status says so (no progress query left waiting)', async () => {
  const f = evalFixture({ taskQueue: uniqueQueue('no-worker'), address: address() });
  const started = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--json']);
  const { evalId } = JSON.parse(started.stdout) as { evalId: string };
  try {
    const r = await runVero(['status', evalId, '-c', f.configFile, '--json']);
    const s = JSON.parse(r.stdout) as { workflowStatus: string; progress: unknown; notes: string[] };
    expect(s.workflowStatus).toBe('RUNNING');
    expect(s.progress).toBeNull();
    expect(s.notes).toEqual([expect.stringMatching(/^no worker is polling test-no-worker-\w+: nothing runs until one does/)]);
  } finally {
    await terminate(evalId);
  }
});

test("Docker down: status and --wait show the preflight's reason while it is retried", async () => {
  const q = uniqueQueue('stuck');
  const harbor = path.join(tempDir(), 'harbor');
  fs.writeFileSync(harbor, `#!/bin/sh\necho '${DOCKER_DOWN}' >&2\nexit 1\n`, { mode: 0o755 });
  const f = evalFixture({ taskQueue: q, address: address(), harbor: { command: [harbor] } });
  const w = spawnWorker(address(), q, {});
  const wait = spawn(VERO, ['start-eval', '-c', f.configFile, '--candidate', 'improved', '--wait'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  wait.stderr.on('data', (d: Buffer) => (err += d.toString()));
  let evalId: string | null = null;
  try {
    evalId = await until('started', async () => /(?:started|attached) (eval-\S+)/.exec(err)?.[1]);
    // --wait: the reason, not "preparing" for minutes.
    await until('--wait says why', async () => err.includes(`waiting: preflightHarbor is retrying`), 60_000);
    expect(err).toContain(`harbor preflight: ${DOCKER_DOWN}`);
    const r = await runVero(['status', evalId, '-c', f.configFile]);
    expect(r.stdout).toMatch(
      new RegExp(`note: preflightHarbor is retrying \\(attempt \\d+\\): harbor preflight: Cannot connect to the Docker daemon`),
    );
  } finally {
    wait.kill('SIGINT');
    if (evalId) await terminate(evalId);
    w.kill('SIGTERM');
  }
});
