/**
 * The real-Harbor tier: `vero` against real Harbor 0.25 on a real Docker engine (scripts/ensure-harbor,
 * scripts/ensure-docker), with small offline datasets written here. Real Harbor is the truth the stand-in
 * imitates; every behaviour these tests pin was first seen here.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import type { TaskResult } from '../../model/evaluation/task-result';
import { HARBOR_VERSION } from '../../model/harbor/version';
import { DATASET, tempDir } from '../helpers/fixtures';
import { runVero, spawnWorker, until } from '../helpers/process';
import {
  dockerObjects,
  realFixture,
  describeOrFail,
  realHarborUnavailable,
  REWARD_1,
  trialObjects,
  writeTask,
} from '../helpers/real-harbor';
import { address, client, completedTasks, uniqueQueue, withWorker } from '../helpers/temporal';

const unavailable = realHarborUnavailable();
const realDescribe = describeOrFail(unavailable);

jest.setTimeout(600_000);

async function start(configFile: string, candidate: string, overrides: Record<string, unknown> = {}) {
  const cfg = loadEvalConfig(configFile, overrides);
  const input = await prepareEvalInput(cfg, candidate);
  return { input, ...(await startOrAttach(await client(), input, cfg.temporal.task_queue)) };
}

async function evaluate(configFile: string, candidate: string, overrides: Record<string, unknown> = {}): Promise<CandidateResult> {
  return (await (await start(configFile, candidate, overrides)).handle.result()) as CandidateResult;
}

const byTask = (r: CandidateResult): Record<string, TaskResult> => Object.fromEntries((r.tasks ?? []).map((t) => [t.task, t]));
const scores = (r: CandidateResult) => Object.fromEntries((r.tasks ?? []).map((t) => [t.task, t.score]));
const trialNamesOf = (jobsDir: string): string[] =>
  fs.existsSync(jobsDir)
    ? fs
        .readdirSync(jobsDir)
        .flatMap((j) => (fs.statSync(path.join(jobsDir, j)).isDirectory() ? fs.readdirSync(path.join(jobsDir, j)) : []))
    : [];
/** The trial dirs of every run of an evaluation (`<home>/runs/<evalId>`). */
const trialNamesOfEvaluation = (evalRuns: string): string[] =>
  fs.existsSync(evalRuns) ? fs.readdirSync(evalRuns).flatMap((run) => trialNamesOf(path.join(evalRuns, run, 'jobs'))) : [];
/**
 * Seconds from each trial's verifier end to its result (Harbor's own timestamps in result.json): Harbor's stop of
 * the environment, which waits Docker's 10 s stop timeout unless vero cuts it (harbor/stop-wait.ts).
 */
const afterVerifierSec = (jobDir: string): number[] =>
  fs
    .readdirSync(jobDir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(jobDir, e.name, 'result.json')))
    .map(
      (e) =>
        JSON.parse(fs.readFileSync(path.join(jobDir, e.name, 'result.json'), 'utf8')) as {
          finished_at: string;
          verifier?: { finished_at?: string };
        },
    )
    .filter((r) => r.verifier?.finished_at)
    .map((r) => (Date.parse(r.finished_at) - Date.parse(r.verifier!.finished_at!)) / 1000);
const commit = (repo: string, files: Record<string, string>, message: string): string => {
  for (const [rel, text] of Object.entries(files)) fs.writeFileSync(path.join(repo, rel), text);
  execFileSync('git', ['-C', repo, 'add', '-A']);
  execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', message]);
  return execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
};

realDescribe('real Harbor 0.25 on Docker', () => {
  const before = unavailable ? [] : dockerObjects();
  afterAll(() => {
    // Nothing the tier started is left in Docker (containers, networks, images, volumes).
    if (!unavailable) expect(dockerObjects()).toEqual(before);
  });

  test('the example agent on mini-bench: baseline 2/6, improved 4.5/6, as Harbor scores it; `vero trials` agrees', async () => {
    const q = uniqueQueue('real-e2e');
    const f = realFixture({ taskQueue: q, address: address() });
    await withWorker(q, async () => {
      const base = await evaluate(f.configFile, 'baseline');
      const improved = await evaluate(f.configFile, 'improved');
      expect(scores(base)).toEqual({
        'add-cli-flag': 0,
        'count-words': 1,
        'fix-csv-parser': 0,
        'hello-world': 1,
        'reverse-string': 0,
        'sum-numbers': 0,
      });
      expect(improved.score).toBeCloseTo(4.5 / 6);
      expect(byTask(improved)['fix-csv-parser']!.score).toBe(0.5);
      expect(improved.harborVersions).toEqual([HARBOR_VERSION]);
      expect(byTask(improved)['hello-world']!.taskName).toBe('mini-bench/hello-world'); // [task] name ≠ dir name
      // The preflight dry run ran once, with Harbor's verdict.
      const runDir = path.dirname(byTask(improved)['hello-world']!.jobDir.replace(/\/jobs\/.*$/, '/jobs'));
      expect(fs.readFileSync(path.join(runDir, 'preflight.harbor.log'), 'utf8')).toContain('Dry run OK — 1 trial(s)');
      // Each trial's stop was cut short of Docker's 10 s timeout (its PID 1 drops SIGTERM), and the harbor log says so.
      const hello = byTask(improved)['hello-world']!;
      expect(afterVerifierSec(hello.jobDir)).toEqual([expect.any(Number)]);
      expect(Math.max(...afterVerifierSec(hello.jobDir))).toBeLessThan(8);
      expect(fs.readFileSync(`${hello.jobDir}.harbor.log`, 'utf8')).toMatch(/SIGKILL to \S+ \(project hello-world__/);
      // `vero trials` on the real jobs dir gives the evaluation's rows.
      const cli = await runVero(['trials', path.join(runDir, 'jobs'), '--json']);
      expect(cli.code).toBe(0);
      const offline = (JSON.parse(cli.stdout) as { tasks: { task: string; score: number; trial: string }[] }).tasks;
      expect(offline.map((t) => [t.task, t.score, t.trial])).toEqual((improved.tasks ?? []).map((t) => [t.task, t.score, t.trial]));
    });
  });

  test('a mixed 0.25 dataset: image-only, multi-step, multi-reward, build failure, missing reward, a non-task dir; kwargs stay strings; .env.local has no effect', async () => {
    const ds = tempDir('vero-real-ds-');
    writeTask(ds, 'image-only', {
      toml: `[environment]\ndocker_image = "vero-base:bookworm"\n`,
      dockerfile: null,
      test: REWARD_1,
      solve: 'true',
    });
    writeTask(ds, 'two-steps', {
      toml: `multi_step_reward_strategy = "final"\n\n[[steps]]\nname = "one"\n\n[[steps]]\nname = "two"\n\n[environment]\ndocker_image = "vero-base:bookworm"\n`,
      dockerfile: null,
      instruction: null,
      test: 'if [ -f /tmp/one ] && [ -f /tmp/two ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt',
      files: {
        'steps/one/instruction.md': 'touch /tmp/one\n',
        'steps/one/solution/solve.sh': '#!/bin/bash\ntouch /tmp/one\n',
        'steps/two/instruction.md': 'touch /tmp/two\n',
        'steps/two/solution/solve.sh': '#!/bin/bash\ntouch /tmp/two\n',
      },
    });
    writeTask(ds, 'multi-reward', {
      test: `echo '{"pass": 1, "tests_passed": 3}' > /logs/verifier/reward.json`,
      solve: 'true',
    });
    writeTask(ds, 'bad-build', { dockerfile: ['RUN echo "no such package" && exit 3'], test: REWARD_1, solve: 'true' });
    writeTask(ds, 'no-reward', { test: 'echo "verifier ran but wrote no reward"', solve: 'true' });
    fs.mkdirSync(path.join(ds, 'notes'));
    fs.writeFileSync(path.join(ds, 'notes', 'README.md'), 'not a task\n');

    const q = uniqueQueue('real-mixed');
    const f = realFixture({
      taskQueue: q,
      address: address(),
      dataset: ds,
      harbor: { agent: 'oracle', n_attempts: 2, max_retries: 1, agent_kwargs: { flag: 'true', code: '007', list: '[1]' } },
      scoring: { error_rate_threshold: 0.5 },
      execution: { concurrency: 5, task_attempts: 1 },
    });
    // The candidate commits a .env.local that would point Harbor at a dead Docker engine.
    commit(f.repo, { '.env.local': 'DOCKER_HOST=unix:///nonexistent/docker.sock\n' }, 'add .env.local');
    await withWorker(q, async () => {
      const r = await evaluate(f.configFile, 'HEAD');
      const t = byTask(r);
      expect(Object.keys(t).sort()).toEqual(['bad-build', 'image-only', 'multi-reward', 'no-reward', 'two-steps']);
      expect(r.skippedDirs).toEqual([{ dir: 'notes', reason: 'no task.toml' }]);
      expect(t['image-only']).toMatchObject({ status: 'scored', score: 1, nTrials: 2 });
      expect(t['two-steps']).toMatchObject({ status: 'scored', score: 1 });
      expect(t['multi-reward']).toMatchObject({ status: 'scored', score: 1, metrics: { pass: 1, tests_passed: 3 } });
      expect(t['bad-build']!.status).toBe('error');
      expect(t['bad-build']!.error).toMatch(/no trial has verifier rewards \(\w+Error: .+/);
      expect(t['no-reward']!.status).toBe('error');
      expect(t['no-reward']!.error).toMatch(/RewardFileNotFoundError: .+/);
      expect(r.status).toBe('completed'); // 2 errors of 5 < 0.5
      // Strings stayed strings on their way through `--ak key=value`.
      const trialConfig = JSON.parse(
        fs.readFileSync(path.join(t['image-only']!.jobDir, t['image-only']!.trial!, 'config.json'), 'utf8'),
      ) as { agent: { kwargs: Record<string, unknown> } };
      expect(trialConfig.agent.kwargs).toEqual({ flag: 'true', code: '007', list: '[1]' });
    });
  });

  test('worker SIGKILLed mid-task: a new worker finishes; no finished task re-runs, the running harbor is adopted', async () => {
    const ds = tempDir('vero-real-kill-');
    writeTask(ds, 'quick-a', { test: REWARD_1, solve: 'true' });
    writeTask(ds, 'quick-b', { test: REWARD_1, solve: 'true' });
    writeTask(ds, 'slow', { test: REWARD_1, solve: 'sleep 60' });
    const q = uniqueQueue('real-kill');
    const f = realFixture({
      taskQueue: q,
      address: address(),
      dataset: ds,
      harbor: { agent: 'oracle' },
      // One attempt: a worker crash must not cost one (the task would become an error row).
      execution: { concurrency: 3, task_attempts: 1, heartbeat_timeout: '5s' },
    });
    const { handle, input } = await start(f.configFile, 'HEAD');
    const runs = path.join(f.home, 'runs', input.evalId);
    const c = await client();
    let w = spawnWorker(address(), q);
    try {
      await until(
        'both quick tasks done while the slow trial runs',
        async () => {
          const done = await completedTasks(c, input.evalId);
          if (!(done.includes('quick-a') && done.includes('quick-b'))) return false;
          const names = trialNamesOfEvaluation(runs);
          return names.some((n) => n.startsWith('slow__') && trialObjects([n]).some((o) => o.startsWith('container ')));
        },
        300_000,
      );
      w.kill('SIGKILL');
      w = spawnWorker(address(), q);
      const r = (await handle.result()) as CandidateResult;
      expect(scores(r)).toEqual({ 'quick-a': 1, 'quick-b': 1, slow: 1 });
      expect(byTask(r).slow!.notes!.join(' ')).toMatch(/adopted the running harbor/);
    } catch (e) {
      throw new Error(`${String(e)}\nworker log:\n${w.tail()}`);
    } finally {
      w.kill('SIGTERM');
    }
    // harbor started once per task, across the crash: `# vero-harbor attempt` lines in each task's harbor log.
    const starts = Object.fromEntries(
      execFileSync('find', [runs, '-path', '*/jobs/*.harbor.log'], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((l) => [path.basename(l, '.harbor.log'), (fs.readFileSync(l, 'utf8').match(/^# vero-harbor attempt /gm) ?? []).length]),
    );
    expect(starts).toEqual({ 'quick-a': 1, 'quick-b': 1, slow: 1 });
    // Each was forked by the worker's fork server (Harbor imported once per worker), and the forked slow one,
    // whose environment is the server's, was still adopted (by its pid file's start time).
    const forked = execFileSync('grep', ['-l', "forked by the worker's harbor fork server", '-r', runs, '--include=*.harbor.log'], {
      encoding: 'utf8',
    });
    expect(
      forked
        .split('\n')
        .filter(Boolean)
        .map((l) => path.basename(l, '.harbor.log'))
        .sort(),
    ).toEqual(['quick-a', 'quick-b', 'slow']);
  });

  test('a task timeout and a cancel stop harbor and leave no container, network or image of those trials', async () => {
    const ds = tempDir('vero-real-slow-');
    writeTask(ds, 'slow', { test: REWARD_1, solve: 'sleep 600' });
    const q = uniqueQueue('real-stop');
    // A grace too short for Harbor's own teardown: vero must remove what the killed trial left.
    const timeout = realFixture({
      taskQueue: q,
      address: address(),
      dataset: ds,
      harbor: { agent: 'oracle' },
      execution: { task_timeout: '25s', task_attempts: 1, stop_grace: '1s' },
    });
    // (A different agent_env: the evaluation id covers the harbor section, not `execution`.)
    const cancel = realFixture({
      taskQueue: q,
      address: address(),
      dataset: ds,
      harbor: { agent: 'oracle', agent_env: { RUN: 'cancel' } },
    });
    await withWorker(q, async () => {
      const r = await evaluate(timeout.configFile, 'HEAD');
      expect(byTask(r).slow).toMatchObject({ status: 'error', timedOut: true });
      const jobsDir = path.join(timeout.home, 'runs');
      const trials = fs.readdirSync(jobsDir).flatMap((e) => trialNamesOfEvaluation(path.join(jobsDir, e)));
      expect(trials.length).toBeGreaterThan(0);
      expect(trialObjects(trials)).toEqual([]);

      const { handle, input } = await start(cancel.configFile, 'HEAD');
      const cancelRuns = path.join(cancel.home, 'runs', input.evalId);
      // Wait until the trial's container runs, then cancel.
      const trial = await until(
        'the slow trial to start its container',
        async () => {
          const names = trialNamesOfEvaluation(cancelRuns);
          return names.find((n) => trialObjects([n]).some((o) => o.startsWith('container ')));
        },
        240_000,
      );
      await handle.cancel();
      const err = await handle.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(trialObjects([trial])).toEqual([]);
    });
  });

  test('Docker briefly down: harbor cannot start, vero waits for the engine and runs the task when it is back', async () => {
    const sockDir = tempDir('vero-real-sock-');
    const sock = path.join(sockDir, 'docker.sock');
    const ds = tempDir('vero-real-one-');
    fs.cpSync(path.join(DATASET, 'hello-world'), path.join(ds, 'hello-world'), { recursive: true });
    const q = uniqueQueue('real-dockerdown');
    const f = realFixture({
      taskQueue: q,
      address: address(),
      dataset: ds,
      harbor: { agent: 'oracle', env: { DOCKER_HOST: `unix://${sock}` } },
      execution: { preflight: false, task_attempts: 1 },
    });
    await withWorker(q, async () => {
      const { handle } = await start(f.configFile, 'HEAD');
      // harbor fails to start at least once ("Docker daemon is not running"), then the engine comes back.
      await until('harbor to fail against the dead socket', async () => {
        const logs = fs.existsSync(f.home)
          ? execFileSync('find', [f.home, '-name', '*.harbor.log'], { encoding: 'utf8' }).split('\n').filter(Boolean)
          : [];
        return logs.some((l) => /Docker daemon is not running|Cannot connect to the Docker daemon/.test(fs.readFileSync(l, 'utf8')));
      });
      fs.symlinkSync('/var/run/docker.sock', sock);
      const r = (await handle.result()) as CandidateResult;
      expect(byTask(r)['hello-world']).toMatchObject({ status: 'scored', score: 1, runs: 1 });
      expect(byTask(r)['hello-world']!.notes!.join(' ')).toMatch(/waited for Docker/);
    });
  });

  test('task files changed between attempts: the retry starts a fresh job (Harbor refuses to resume) and says so', async () => {
    const ds = tempDir('vero-real-change-');
    const task = writeTask(ds, 'fixed-later', { test: 'echo "no reward yet"', solve: 'true' });
    const q = uniqueQueue('real-change');
    const f = realFixture({ taskQueue: q, address: address(), dataset: ds, harbor: { agent: 'oracle' }, execution: { task_attempts: 2 } });
    await withWorker(q, async () => {
      const { handle, input } = await start(f.configFile, 'HEAD');
      const runs = path.join(f.home, 'runs', input.evalId);
      // After the first attempt's trial finished without a reward, the task's verifier is fixed.
      await until(
        'the first trial result',
        async () =>
          fs.existsSync(runs) &&
          fs
            .readdirSync(runs)
            .some((run) =>
              trialNamesOf(path.join(runs, run, 'jobs')).some((t) =>
                fs.existsSync(path.join(runs, run, 'jobs', 'fixed-later', t, 'result.json')),
              ),
            ),
        240_000,
      );
      fs.writeFileSync(path.join(task, 'tests', 'test.sh'), `#!/bin/bash\n${REWARD_1}\n`);
      const r = (await handle.result()) as CandidateResult;
      const row = byTask(r)['fixed-later']!;
      expect(row).toMatchObject({ status: 'scored', score: 1, runs: 2 });
      expect(row.notes!.join(' ')).toMatch(/harbor refused to resume the job \(.*lock\.json that does not match.*\); started a fresh job/);
    });
  });

  test('a local registry with relative task paths: resolved against the registry file, whatever harbor’s cwd', async () => {
    const regDir = tempDir('vero-real-reg-');
    fs.cpSync(path.join(DATASET, 'hello-world'), path.join(regDir, 'tasks', 'hello-world'), { recursive: true });
    fs.writeFileSync(
      path.join(regDir, 'registry.json'),
      JSON.stringify([
        { name: 'local', version: '1.0', description: '', tasks: [{ name: 'hello-world', path: 'tasks/hello-world' }], metrics: [] },
      ]),
    );
    const q = uniqueQueue('real-registry');
    const f = realFixture({ taskQueue: q, address: address(), harbor: { agent: 'oracle' } });
    await withWorker(q, async () => {
      const r = await evaluate(f.configFile, 'HEAD', {
        'tasks.source': { dataset: 'local@1.0', registry_path: path.join(regDir, 'registry.json') },
      });
      expect(byTask(r)['hello-world']).toMatchObject({ status: 'scored', score: 1 });
    });
  });
});
