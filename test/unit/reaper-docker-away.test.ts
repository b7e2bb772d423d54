/**
 * A harbor of this host's record that died with its worker left a trial's container in Docker. When the orphan
 * reaper's pass comes while Docker does not answer, the record (and the job's pid file, which names the trial) stay;
 * the next pass, with Docker back, removes the container and only then drops the record. Docker here is a stand-in
 * `docker` on PATH that keeps its containers in a file and answers nothing while a `down` file exists.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { hostGroupRecords, recordGroup } from '../../infra/host-groups';
import { reapOrphans } from '../../worker/orphan-reaper';
import { tempDir } from '../helpers/fixtures';

const FAKE_DOCKER = `#!/bin/bash
state="$FAKE_DOCKER_STATE"
if [ -e "$state/down" ]; then echo "Cannot connect to the Docker daemon" >&2; exit 1; fi
case "$1" in
  info) echo 27.0.0 ;;
  ps) cut -f1 "$state/containers" ;;
  container) shift 4; for id in "$@"; do awk -F'\\t' -v id="$id" '$1 == id' "$state/containers"; done ;;
  rm) shift 3; for id in "$@"; do awk -F'\\t' -v id="$id" '$1 != id' "$state/containers" > "$state/c.new"; mv "$state/c.new" "$state/containers"; done ;;
  *) ;;
esac
`;

const saved = { PATH: process.env.PATH, VERO_HOST_ID: process.env.VERO_HOST_ID, VERO_HOST_GROUPS_DIR: process.env.VERO_HOST_GROUPS_DIR };

afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  delete process.env.FAKE_DOCKER_STATE;
});

test('a dead harbor’s record is dropped only once its trials’ leftovers are removed: Docker away, then back', async () => {
  const state = tempDir('vero-fake-docker-');
  const bin = tempDir('vero-fake-docker-bin-');
  fs.writeFileSync(path.join(bin, 'docker'), FAKE_DOCKER, { mode: 0o755 });
  fs.writeFileSync(
    path.join(state, 'containers'),
    'c1\thello-world__dead001__env\thello-world__dead001__env-main-1\nc2\tsomeone-else\tkept\n',
  );
  process.env.PATH = `${bin}:${saved.PATH ?? ''}`;
  process.env.FAKE_DOCKER_STATE = state;
  process.env.VERO_HOST_ID = 'reaper-docker-away';
  process.env.VERO_HOST_GROUPS_DIR = tempDir('vero-groups-');

  // The job of a harbor killed mid-trial: an unfinished trial dir, the pid file naming that (dead) harbor.
  const jobs = tempDir('vero-jobs-');
  const jobDir = path.join(jobs, 'hello-world');
  fs.mkdirSync(path.join(jobDir, 'hello-world__dead001'), { recursive: true });
  const pid = spawnSync('true').pid!;
  const pidFile = path.join(jobs, 'hello-world.pid');
  fs.writeFileSync(pidFile, JSON.stringify({ pid, host: 'reaper-docker-away', startedAt: Date.now() }));
  recordGroup({
    pid,
    host: 'reaper-docker-away',
    ownerPid: 0,
    namespace: 'default',
    workflowId: 'w',
    activityId: '1',
    attempt: 1,
    jobDir,
    pidFile,
    startedAt: 0,
  });
  const containers = () => fs.readFileSync(path.join(state, 'containers'), 'utf8').trim().split('\n');
  const reap = () =>
    reapOrphans({ client: {} as Client, deployment: { namespace: 'default', namespaceId: 'x', taskQueue: 'q' }, log: () => undefined });

  fs.writeFileSync(path.join(state, 'down'), '');
  await reap();
  expect(hostGroupRecords().gone.map((g) => g.pid)).toEqual([pid]);
  expect(containers()).toHaveLength(2);

  fs.rmSync(path.join(state, 'down'));
  await reap();
  expect(containers()).toEqual(['c2\tsomeone-else\tkept']);
  expect(hostGroupRecords()).toEqual({ live: [], gone: [] });
});
