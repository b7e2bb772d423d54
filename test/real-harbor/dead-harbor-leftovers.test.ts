/**
 * A harbor killed before its teardown (with its worker) leaves its running trials' compose projects in Docker.
 * Real Docker objects made as Harbor's docker environment labels them (a trial's `<trial>__env` project: a
 * container on its network, its built image), a job whose pid file names that dead harbor, and the task's next
 * attempt (runTask, the stand-in as harbor): the objects are gone before the job resumes. A harbor of another host
 * sharing the engine and the home is never taken for dead: its trials' objects stay until that host's reaper sees
 * it gone. Objects that merely look like a trial's (named so, not labelled) always stay.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { handoverFile } from '../../harbor/trial-leftovers';
import { reapOrphans } from '../../worker/orphan-reaper';
import { activityRun } from '../helpers/activity-run';
import { tempDir } from '../helpers/fixtures';
import { pidAlive } from '../helpers/process';
import { BASE_IMAGE, dockerObjects, describeOrFail, realHarborUnavailable } from '../helpers/real-harbor';

const unavailable = realHarborUnavailable();
const realDescribe = describeOrFail(unavailable);

jest.setTimeout(120_000);

const docker = (...args: string[]): string => {
  const r = spawnSync('docker', args, { encoding: 'utf8', input: args.includes('-') ? `FROM ${BASE_IMAGE}\n` : undefined });
  if (r.status !== 0) throw new Error(`docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

/** What Harbor's docker environment makes for a trial (its compose project), plus a look-alike it did not make. */
function makeTrialObjects(trial: string): string[] {
  const project = `${trial}__env`.toLowerCase();
  const label = (key: string, value: string) => ['--label', `com.docker.compose.${key}=${value}`];
  docker('network', 'create', ...label('project', project), ...label('network', 'default'), `${project}_default`);
  docker('build', '-q', '-t', `${project}-main`, ...label('project', project), ...label('service', 'main'), '-');
  const labels = [...label('project', project), ...label('service', 'main')];
  docker('create', '--name', `${project}-main-1`, ...labels, '--network', `${project}_default`, `${project}-main`, 'sleep', 'infinity');
  return [`container ${project}-main-1`, `image ${project}-main:latest`, `network ${project}_default`];
}

/** A look-alike: named as the trial's project, made by someone else (no compose label). */
function makeLookAlike(trial: string): string {
  const name = `${trial}__env-main-1-mine`.toLowerCase();
  docker('create', '--name', name, BASE_IMAGE, 'true');
  return `container ${name}`;
}

const objectsNow = (objects: string[]) => dockerObjects().filter((o) => objects.includes(o));

/** A pid that is no process now. */
function deadPid(): number {
  const r = spawnSync('true');
  return r.pid!;
}

const previousHost = process.env.VERO_HOST_ID;
const previousGroups = process.env.VERO_HOST_GROUPS_DIR;

realDescribe('a dead harbor’s trial leftovers', () => {
  const before = unavailable ? [] : dockerObjects();
  const made: string[] = [];
  let otherHarbor: ReturnType<typeof spawn> | undefined;

  afterAll(() => {
    otherHarbor?.kill('SIGKILL');
    for (const o of made.filter((o) => dockerObjects().includes(o))) {
      const [kind, name] = o.split(' ') as [string, string];
      spawnSync('docker', kind === 'container' ? ['rm', '-f', name] : [kind, 'rm', name]);
    }
    if (previousHost === undefined) delete process.env.VERO_HOST_ID;
    else process.env.VERO_HOST_ID = previousHost;
    if (previousGroups === undefined) delete process.env.VERO_HOST_GROUPS_DIR;
    else process.env.VERO_HOST_GROUPS_DIR = previousGroups;
    expect(dockerObjects()).toEqual(before);
  });

  test('the next attempt removes its own host’s dead harbor’s leftovers, never another host’s; that host’s reaper does', async () => {
    process.env.VERO_HOST_ID = 'leftovers-host-a';
    process.env.VERO_HOST_GROUPS_DIR = tempDir('vero-groups-');
    const { runDir, attempt } = await activityRun({ tasks: { names: ['hello-world', 'count-words'] } }, 'vero-leftovers-');
    const jobs = path.join(runDir, 'jobs');

    // Each job ran once; then a harbor of each was killed mid-trial with its worker: an unfinished trial, its
    // compose project on the engine, the pid file naming that harbor. hello-world's ran on this host (dead);
    // count-words' on host b, where it still runs (host a cannot see host b's processes: a live one is a live one).
    for (const task of ['hello-world', 'count-words']) expect(await attempt(task)).toMatchObject({ status: 'scored' });
    const dead = { trial: 'hello-world__dead001', pid: deadPid() };
    otherHarbor = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
    const live = { trial: 'count-words__live001', pid: otherHarbor.pid! };
    const harborOf = (task: string, trial: string, pid: number, host: string) => {
      fs.mkdirSync(path.join(jobs, task, trial));
      fs.rmSync(path.join(jobs, task, 'result.json')); // the job was running: Harbor writes its result at the end
      fs.writeFileSync(path.join(jobs, `${task}.pid`), JSON.stringify({ pid, host, startedAt: Date.now() }));
      const objects = makeTrialObjects(trial);
      made.push(...objects);
      return objects;
    };
    const deadObjects = harborOf('hello-world', dead.trial, dead.pid, 'leftovers-host-a');
    const liveObjects = harborOf('count-words', live.trial, live.pid, 'leftovers-host-b');
    const lookAlikes = [makeLookAlike(dead.trial), makeLookAlike(live.trial)];
    made.push(...lookAlikes);
    expect(objectsNow([...deadObjects, ...liveObjects, ...lookAlikes])).toHaveLength(8);

    // The next attempts, on host a: the dead harbor's objects are gone, host b's harbor's stay (handed over).
    expect(await attempt('hello-world')).toMatchObject({ status: 'scored' });
    expect(await attempt('count-words')).toMatchObject({ status: 'scored' });
    expect(objectsNow(deadObjects)).toEqual([]);
    expect(objectsNow(liveObjects).sort()).toEqual([...liveObjects].sort());
    expect(fs.existsSync(handoverFile(path.join(jobs, 'count-words.pid')))).toBe(true);

    // Host b's reaper while that harbor runs: its objects stay. Once it is gone, they are removed.
    process.env.VERO_HOST_ID = 'leftovers-host-b';
    const group = {
      pid: live.pid,
      host: 'leftovers-host-b',
      ownerPid: 0,
      namespace: 'default',
      workflowId: 'w',
      activityId: '1',
      attempt: 1,
      jobDir: path.join(jobs, 'count-words'),
      pidFile: path.join(jobs, 'count-words.pid'),
      startedAt: 0,
    };
    fs.writeFileSync(path.join(process.env.VERO_HOST_GROUPS_DIR!, `leftovers-host-b-${live.pid}.json`), JSON.stringify(group));
    const deployment = { namespace: 'default', namespaceId: 'another-server', taskQueue: 'unused' };
    const reap = () => reapOrphans({ client: new Client(), deployment, log: () => undefined });
    await reap();
    expect(objectsNow(liveObjects).sort()).toEqual([...liveObjects].sort());
    otherHarbor.kill('SIGKILL');
    await new Promise((r) => otherHarbor!.once('exit', r));
    expect(pidAlive(live.pid)).toBe(false);
    await reap();
    expect(objectsNow(liveObjects)).toEqual([]);
    expect(fs.existsSync(handoverFile(path.join(jobs, 'count-words.pid')))).toBe(false);
    expect(objectsNow(lookAlikes).sort()).toEqual([...lookAlikes].sort());
  });
});
