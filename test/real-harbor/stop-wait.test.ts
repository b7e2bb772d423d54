/**
 * Docker's stop wait, cut where it can only be a wait (harbor/stop-wait.ts), on real Docker: containers labelled as
 * Harbor's docker environment labels a trial's (`<trial>__env`), stopped as `docker compose down` stops them
 * (`docker stop`, the default 10 s timeout), while a task's attempt watches its job. A PID 1 that drops SIGTERM
 * (`sh -c "sleep infinity"`, Harbor's main service) is killed at once; one that handles SIGTERM is left to end as it
 * does; a container of another job, or not labelled as a trial's, waits Docker's full timeout. The `docker events`
 * stream ends with its listener, even a SIGKILLed one.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cutStopWaits } from '../../harbor/stop-wait';
import type { TaskAttempt } from '../../harbor/task-attempt';
import { tempDir } from '../helpers/fixtures';
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
/** A PID 1 that handles SIGTERM: it exits 0 a second after it. */
const HANDLES_TERM = ['sh', '-c', 'trap "sleep 1; exit 0" TERM; while :; do sleep 0.1; done'];

/** A container of a compose project, running `cmd`, and its name. */
function runContainer(project: string, cmd: string[]): string {
  const name = `${project}-main-1`;
  docker('run', '-d', '--name', name, '--label', `com.docker.compose.project=${project}`, BASE_IMAGE, ...cmd);
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

/** The parts of a task attempt the watch reads: its job dir with these trial dirs, its harbor log. */
function attemptOf(jobDir: string, trials: string[]): TaskAttempt {
  for (const t of trials) fs.mkdirSync(path.join(jobDir, t), { recursive: true });
  const warnings: string[] = [];
  return {
    s: { harbor: { environment: 'docker' } },
    env: {},
    jobDir,
    logFile: path.join(jobDir, 'harbor.log'),
    task: 'task',
    ctx: { log: { info: () => undefined, warn: (m: string) => warnings.push(m) } },
  } as unknown as TaskAttempt;
}

const harborLog = (t: TaskAttempt): string => (fs.existsSync(t.logFile) ? fs.readFileSync(t.logFile, 'utf8') : '');

/** Waits until `docker events` reports to the watch (it connects as it starts). */
const settle = () => new Promise((r) => setTimeout(r, 1_000));

realDescribe('Docker’s stop wait, cut for the trials of a running task', () => {
  const before = unavailable ? [] : dockerObjects();
  const made: string[] = [];
  afterAll(() => {
    if (made.length) spawnSync('docker', ['rm', '-f', ...made]);
    expect(dockerObjects()).toEqual(before);
  });

  test('a trial container whose PID 1 drops SIGTERM is killed at once; one that handles SIGTERM ends as it does', async () => {
    const t = attemptOf(tempDir('vero-stop-wait-'), ['stop-wait__Abc1234', 'stop-wait__Def5678']);
    const sleeper = runContainer('stop-wait__abc1234__env', SLEEP_INFINITY);
    const handler = runContainer('stop-wait__def5678__env', HANDLES_TERM);
    made.push(sleeper, handler);
    const unwatch = cutStopWaits(t);
    try {
      await settle();
      const cut = await stop(sleeper);
      expect(cut.exitCode).toBe(137); // SIGKILL, as Docker's own would have been
      expect(cut.seconds).toBeLessThan(8); // before Docker's 10 s timeout
      const graceful = await stop(handler);
      expect(graceful.exitCode).toBe(0); // its own SIGTERM handler ended it: not killed
      await settle();
    } finally {
      await unwatch();
    }
    const log = harborLog(t);
    expect(log).toContain(`SIGKILL to ${sleeper} (project stop-wait__abc1234__env)`);
    expect(log).not.toContain(handler);
  });

  test('a container of another job, or merely named like a trial’s, waits Docker’s full timeout', async () => {
    const t = attemptOf(tempDir('vero-stop-wait-'), ['stop-wait__Ghi9012']);
    const otherJob = runContainer('stop-wait__zzz9999__env', SLEEP_INFINITY);
    const unlabelled = 'stop-wait__ghi9012__env-main-1-mine';
    docker('run', '-d', '--name', unlabelled, BASE_IMAGE, ...SLEEP_INFINITY);
    made.push(otherJob, unlabelled);
    const unwatch = cutStopWaits(t);
    try {
      await settle();
      for (const waited of await Promise.all([otherJob, unlabelled].map(stop))) {
        expect(waited.seconds).toBeGreaterThanOrEqual(9.5);
        expect(waited.exitCode).toBe(137);
      }
    } finally {
      await unwatch();
    }
    expect(harborLog(t)).toBe('');
  });

  test('a worker SIGKILLed while it watches leaves no `docker events` behind', async () => {
    const module = path.join(__dirname, '..', '..', 'dist', 'infra', 'docker-events.js');
    const script = `require(${JSON.stringify(module)}).onContainerSignals({}, () => {}); setInterval(() => {}, 1000);`;
    const worker = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    const streamOf = (pid: number) =>
      spawnSync('pgrep', ['-f', '-P', String(pid), '^sh -c exec 3>&1'], { encoding: 'utf8' })
        .stdout.trim()
        .split('\n')
        .filter(Boolean);
    const eventsUnder = (sh: string[]) =>
      sh.flatMap((p) => spawnSync('pgrep', ['-P', p, 'docker'], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean));
    let sh: string[] = [];
    let events: string[] = [];
    try {
      for (let i = 0; i < 50 && events.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        sh = streamOf(worker.pid!);
        events = eventsUnder(sh);
      }
    } finally {
      worker.kill('SIGKILL');
    }
    expect(events).toHaveLength(1); // the stream ran
    const alive = () => [...sh, ...events].filter((p) => spawnSync('kill', ['-0', p]).status === 0);
    for (let i = 0; i < 50 && alive().length; i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive()).toEqual([]);
  });
});
