/**
 * Docker's stop wait, cut where it can only be a wait (harbor/stop-wait.ts), on real Docker: containers labelled as
 * Harbor's docker environment labels a trial's (`<trial>__env`), stopped as `docker compose down` stops them
 * (`docker stop`, the default 10 s timeout), while a task's attempt watches its job. Harbor's idle main service
 * (`sh -c "sleep infinity"`) of a trial whose verifier wrote its reward is killed at once; a PID 1 that handles
 * SIGTERM (even with a handler that resets itself) ends as it does; a trial without a reward yet, a container of
 * another job, or one not labelled as a trial's, waits Docker's full timeout. The `docker events` stream ends with its
 * listener, even a SIGKILLed one.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { cutStopWaits } from '../../harbor/stop-wait';
import type { TaskAttempt } from '../../harbor/task-attempt';
import { trialFiles } from '../../model/harbor/paths';
import { tempDir } from '../helpers/fixtures';
import { until } from '../helpers/process';
import { BASE_IMAGE, describeOrFail, dockerObjects, realHarborUnavailable } from '../helpers/real-harbor';

const unavailable = realHarborUnavailable();
const realDescribe = describeOrFail(unavailable);

jest.setTimeout(120_000);

const docker = (...args: string[]): string => {
  const r = spawnSync('docker', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

const SLEEP_INFINITY = ['sh', '-c', 'sleep infinity'];
/** A PID 1 whose SIGTERM handler resets itself as it runs, then exits 0 a second later. */
const HANDLES_TERM_ONCE = ['sh', '-c', 'trap "trap - TERM; sleep 1; exit 0" TERM; while :; do sleep 0.1; done'];

/** A container of a compose project's service (Harbor's `main` unless said), running `cmd`, and its name. */
function runContainer(project: string, cmd: string[], service = 'main'): string {
  const name = `${project}-${service}-1`;
  const labels = ['--label', `com.docker.compose.project=${project}`, '--label', `com.docker.compose.service=${service}`];
  docker('run', '-d', '--name', name, ...labels, BASE_IMAGE, ...cmd);
  return name;
}

/**
 * `docker stop` with Docker's default timeout (as compose's down), its seconds and the container's exit code; run
 * without blocking this process, where the watch runs.
 */
async function stop(name: string): Promise<{ seconds: number; exitCode: number }> {
  const t0 = Date.now();
  await promisify(execFile)('docker', ['stop', name]);
  return { seconds: (Date.now() - t0) / 1000, exitCode: Number(docker('inspect', '-f', '{{.State.ExitCode}}', name)) };
}

/** The parts of a task attempt the watch reads: its job dir with these trial dirs (those `rewarded` with reward 1), its harbor log. */
function attemptOf(jobDir: string, trials: string[], rewarded: string[]): TaskAttempt {
  for (const t of trials) fs.mkdirSync(path.join(jobDir, t, 'verifier'), { recursive: true });
  for (const t of rewarded) fs.writeFileSync(trialFiles(path.join(jobDir, t)).rewardText, '1\n');
  return {
    s: { harbor: { environment: 'docker' } },
    env: {},
    jobDir,
    logFile: path.join(jobDir, 'harbor.log'),
    task: 'task',
    ctx: { log: { info: () => undefined, warn: () => undefined } },
  } as unknown as TaskAttempt;
}

const harborLog = (t: TaskAttempt): string => (fs.existsSync(t.logFile) ? fs.readFileSync(t.logFile, 'utf8') : '');

/** Whether a pid is a live process (a zombie is not). */
const alive = (pid: string): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

realDescribe('Docker’s stop wait, cut for the trials of a running task', () => {
  const before = unavailable ? [] : dockerObjects();
  const made: string[] = [];
  afterAll(() => {
    if (made.length) spawnSync('docker', ['rm', '-f', ...made]);
    expect(dockerObjects()).toEqual(before);
  });

  test('a rewarded trial’s idle main service is killed at once; a PID 1 that handles SIGTERM (once) ends as it does', async () => {
    const trials = ['stop-wait__Abc1234', 'stop-wait__Def5678'];
    const t = attemptOf(tempDir('vero-stop-wait-'), trials, trials);
    const sleeper = runContainer('stop-wait__abc1234__env', SLEEP_INFINITY);
    const handler = runContainer('stop-wait__def5678__env', HANDLES_TERM_ONCE);
    made.push(sleeper, handler);
    const unwatch = cutStopWaits(t);
    try {
      const [cut, graceful] = await Promise.all([stop(sleeper), stop(handler)]);
      expect(cut.exitCode).toBe(137); // SIGKILL, as Docker's own would have been
      expect(cut.seconds).toBeLessThan(8); // before Docker's 10 s timeout
      expect(graceful.exitCode).toBe(0); // its own SIGTERM handler ended it: not killed
      await until('the cut noted in the harbor log', () => harborLog(t).includes(sleeper), 5_000);
    } finally {
      await unwatch();
    }
    const log = harborLog(t);
    expect(log).toContain(`SIGKILL to ${sleeper} (project stop-wait__abc1234__env)`);
    expect(log).not.toContain(handler);
  });

  test('a trial without its reward yet, a task’s own service, a container of another job, or one merely named like a trial’s, waits Docker’s full timeout', async () => {
    const t = attemptOf(tempDir('vero-stop-wait-'), ['stop-wait__Ghi9012', 'stop-wait__Jkl3456'], ['stop-wait__Ghi9012']);
    const unrewarded = runContainer('stop-wait__jkl3456__env', SLEEP_INFINITY);
    const taskService = runContainer('stop-wait__ghi9012__env', SLEEP_INFINITY, 'db');
    const otherJob = runContainer('stop-wait__zzz9999__env', SLEEP_INFINITY);
    const unlabelled = 'stop-wait__ghi9012__env-main-1-mine';
    docker('run', '-d', '--name', unlabelled, BASE_IMAGE, ...SLEEP_INFINITY);
    made.push(unrewarded, taskService, otherJob, unlabelled);
    const unwatch = cutStopWaits(t);
    try {
      for (const waited of await Promise.all([unrewarded, taskService, otherJob, unlabelled].map(stop))) {
        expect(waited.seconds).toBeGreaterThanOrEqual(9.5);
        expect(waited.exitCode).toBe(137);
      }
    } finally {
      await unwatch();
    }
    expect(harborLog(t)).toBe('');
  });

  test('a worker SIGKILLed while it watches leaves no `docker events` behind', async () => {
    const module = path.join(__dirname, '..', '..', 'dist', 'infra', 'docker-events.js'); // (npm test builds first)
    const script = `require(${JSON.stringify(module)}).onContainerSignals({}, () => {}); setInterval(() => {}, 1000);`;
    const worker = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const children = (pid: string, name?: string) =>
      spawnSync('pgrep', ['-P', pid, ...(name ? [name] : [])], { encoding: 'utf8' })
        .stdout.trim()
        .split('\n')
        .filter(Boolean);
    let sh: string[] = [];
    let events: string[] = [];
    try {
      for (let i = 0; i < 50 && events.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        sh = children(String(worker.pid), 'sh');
        events = sh.flatMap((p) => children(p, 'docker'));
      }
    } finally {
      worker.kill('SIGKILL');
    }
    expect(events).toHaveLength(1); // the stream ran
    const living = () => [...sh, ...events].filter(alive);
    await until('the stream ended with its worker', () => living().length === 0, 5_000).catch(() => undefined);
    expect(living()).toEqual([]);
  });
});
