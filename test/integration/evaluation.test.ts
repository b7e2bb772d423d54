/**
 * The durable evaluation end to end: real Temporal dev server, real worker, the Harbor stand-in.
 * Each test asserts outcomes (scores, files, harbor invocations, workflow state), never mock calls.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { getProgress, setConcurrency } from '../../client/running-eval';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { listEvaluations } from '../../client/eval-listing';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { DATASET, evalFixture, invocations, preflights, runsPerTask, STANDIN, tempDir, taskOf } from '../helpers/fixtures';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';
import { until } from '../helpers/process';

jest.setTimeout(120_000);

async function evaluate(f: { configFile: string }, candidate: string, overrides: Record<string, unknown> = {}, force = false) {
  const cfg = loadEvalConfig(f.configFile, overrides);
  const input = await prepareEvalInput(cfg, candidate);
  const c = await client();
  const { handle, mode } = await startOrAttach(c, input, cfg.temporal.task_queue, force);
  return { handle, mode, input, client: c };
}

const byTask = (r: CandidateResult) => Object.fromEntries((r.tasks ?? []).map((t) => [t.task, t]));

// Each test of this block has its own fixture, home, task queue and worker, and mostly waits on its evaluation: they
// run side by side (test.concurrent; jest's maxConcurrency bounds how many at once). The lane tests below it time
// their harbor runs against each other and run alone.
describe('candidate evaluation', () => {
  test.concurrent('two candidates of the example agent score as their profiles say, with files and search attributes', async () => {
    const q = uniqueQueue('e2e');
    const f = evalFixture({ taskQueue: q, address: address() });
    await withWorker(q, async () => {
      const base = (await (await evaluate(f, 'baseline')).handle.result()) as CandidateResult;
      const improved = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
      expect(base.score).toBeCloseTo(2 / 6);
      expect(improved.score).toBeCloseTo(4.5 / 6);
      expect(byTask(improved)['fix-csv-parser']!.score).toBe(0.5);
      expect(improved.nScored).toBe(6);
      expect(improved.status).toBe('completed');
      // The result file and vero-style per-sample files are written under the home dir.
      const file = JSON.parse(fs.readFileSync(improved.resultFile, 'utf8')) as CandidateResult;
      expect(file.tasks).toHaveLength(6);
      const sample = JSON.parse(fs.readFileSync(path.join(f.home, 'results', improved.evalId, 'samples', '0.json'), 'utf8'));
      expect(sample).toMatchObject({
        commit: improved.candidate,
        result_id: improved.evalId,
        dataset_sample: { sample_id: 0, dataset_id: 'mini-bench' },
      });
      // Search attributes make both findable through visibility (eventually consistent).
      const c = await client();
      for (let i = 0; i < 50; i++) {
        const rows = (await listEvaluations(c)).filter((r) => r.evalId === base.evalId || r.evalId === improved.evalId);
        if (rows.length === 2 && rows.every((r) => r.status === 'completed')) {
          expect(rows.find((r) => r.evalId === improved.evalId)!.score).toBeCloseTo(0.75);
          expect(rows.find((r) => r.evalId === base.evalId)!.candidate).toBe(base.candidate);
          return;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error('evaluations not visible with their search attributes');
    });
  });

  test.concurrent('every typed knob reaches harbor as its real flag, one harbor run per task', async () => {
    const q = uniqueQueue('flags');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: {
        n_attempts: 3,
        max_retries: 2,
        n_concurrent_trials: 2,
        environment: 'modal',
        timeout_multiplier: 1.5,
        agent_kwargs: { temperature: 0 },
        agent_env: { FOO: 'bar' },
        retry_exclude: ['AgentTimeoutError'],
      },
      tasks: { names: ['hello-world', 'count-words'] },
    });
    await withWorker(q, async () => {
      const r = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
      expect(r.nScored).toBe(2);
      expect(byTask(r)['hello-world']!.nTrials).toBe(3);
      // Three rewarded attempts per task (the improved agent solves both): pass@3 = pass^3 = 1, no spread.
      expect(byTask(r)['hello-world']!.trialRewards).toEqual([1, 1, 1]);
      expect(r.attempts).toEqual({ k: 3, passAtK: 1, passHatK: 1, withinTaskSd: 0, nTasks: 2 });
    });
    const starts = invocations(f.invocationLog).filter((i) => i.event === 'start');
    expect(starts.map(taskOf).sort()).toEqual(['count-words', 'hello-world']);
    const argv = starts[0]!.argv;
    const flag = (name: string) => argv[argv.indexOf(name) + 1];
    expect(argv[0]).toBe('run');
    expect(flag('-k')).toBe('3');
    expect(flag('-r')).toBe('2');
    expect(flag('-n')).toBe('2');
    expect(flag('-e')).toBe('modal');
    expect(flag('-a')).toBe('agent:SkillAgent');
    expect(flag('-m')).toBe('anthropic/claude-sonnet-4-5');
    expect(flag('--timeout-multiplier')).toBe('1.5');
    expect(flag('--ak')).toBe('temperature=0');
    expect(flag('--ae')).toBe('FOO=bar');
    // the configured exclusion, plus Harbor 0.26's no-retry policy types a non-empty list would otherwise drop
    const excluded = argv.flatMap((a, i) => (argv[i - 1] === '--retry-exclude' ? [a] : []));
    expect(excluded).toContain('AgentTimeoutError');
    expect(excluded).toEqual(expect.arrayContaining(['BudgetExceededError', 'CancelledError']));
    expect(flag('-p')).toBe(DATASET);
    expect(argv).toEqual(expect.arrayContaining(['-y', '-q', '--job-name', '-o']));
    // Harbor ran in a directory vero owns (Harbor 0.25 reads .env.local from its cwd), never the candidate's
    // checkout; the checkout reaches it only as the agent's import path (the stand-in found the profile there).
    const worktree = path.join(f.home, 'worktrees', (await prepareEvalInput(loadEvalConfig(f.configFile), 'improved')).candidate);
    expect(path.basename(starts[0]!.cwd)).toBe('harbor-cwd');
    expect(starts[0]!.cwd.startsWith(path.join(f.home, 'runs'))).toBe(true);
    expect(fs.readdirSync(starts[0]!.cwd)).toEqual([]);
    expect(starts[0]!.cwd).not.toBe(worktree);
  });

  test.concurrent('the retry backoff reaches Harbor in a job config file (Harbor has no flags for it), merged with -r', async () => {
    const q = uniqueQueue('backoff');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: {
        max_retries: 2,
        retry_min_wait_sec: 0.3,
        retry_wait_multiplier: 2,
        retry_max_wait_sec: 30,
        env: { HARBOR_STANDIN_TIME_SCALE: '1' },
      },
      scenario: { tasks: { 'hello-world': [{ exception: 'RuntimeError' }, { exception: 'RuntimeError' }, { reward: 1 }] } },
      tasks: { names: ['hello-world'] },
    });
    await withWorker(q, async () => {
      const r = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
      expect(r.nScored).toBe(1);
      const jobDir = byTask(r)['hello-world']!.jobDir;
      // Harbor's backoff: min(0.3 × 2^attempt, 30) s before each retry, in the same harbor run.
      const log = fs.readFileSync(path.join(jobDir, 'job.log'), 'utf8');
      expect(log).toContain('retrying in 0.3 s (1/2)');
      expect(log).toContain('retrying in 0.6 s (2/2)');
      const config = JSON.parse(fs.readFileSync(path.join(jobDir, 'config.json'), 'utf8')) as { retry: Record<string, unknown> };
      expect(config.retry).toMatchObject({ max_retries: 2, wait_multiplier: 2, min_wait_sec: 0.3, max_wait_sec: 30 });
    });
    const starts = invocations(f.invocationLog).filter((i) => i.event === 'start');
    expect(starts).toHaveLength(1);
    const argv = starts[0]!.argv;
    const file = argv[argv.indexOf('-c') + 1]!;
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ retry: { wait_multiplier: 2, min_wait_sec: 0.3, max_wait_sec: 30 } });
  });

  test.concurrent(
    'a passing trial beats a later failing one; the latest clean attempt wins; mean aggregation counts scored attempts',
    async () => {
      const q = uniqueQueue('rank');
      const scenario = {
        tasks: {
          'hello-world': [{ reward: 1 }, { exception: 'RuntimeError' }],
          'count-words': [
            { reward: 0.2, duration_ms: 0 },
            { reward: 0.9, duration_ms: 30 },
          ],
        },
        default: { reward: 0 },
      };
      const f = evalFixture({
        taskQueue: q,
        address: address(),
        scenario,
        harbor: { n_attempts: 2, n_concurrent_trials: 1 },
        tasks: { names: ['hello-world', 'count-words'] },
        execution: { task_attempts: 1 },
      });
      await withWorker(q, async () => {
        const best = byTask((await (await evaluate(f, 'improved')).handle.result()) as CandidateResult);
        expect(best['hello-world']!.score).toBe(1);
        expect(best['hello-world']!.exceptions).toEqual(['RuntimeError']);
        // Both clean: the one that finished later (attempt 2, 0.9) wins.
        expect(best['count-words']!.score).toBe(0.9);
      });
      const fm = evalFixture({
        taskQueue: q,
        address: address(),
        scenario: { tasks: { 'hello-world': [{ reward: 1 }, { exception: 'AgentTimeoutError', reward: 0 }] } },
        harbor: { n_attempts: 2 },
        tasks: { names: ['hello-world'] },
        scoring: { aggregate: 'mean' },
      });
      await withWorker(q, async () => {
        const r = byTask((await (await evaluate(fm, 'improved')).handle.result()) as CandidateResult);
        expect(r['hello-world']!.score).toBe(0.5);
        expect(r['hello-world']!.metrics).toMatchObject({ n_attempts: 2, n_scored: 2, n_clean: 1 });
      });
    },
  );

  test.concurrent('an errored task is re-run (resuming its Harbor job); scored tasks are not run again', async () => {
    const q = uniqueQueue('rerun');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      scenario: {
        tasks: { 'sum-numbers': [{ exception: 'RuntimeError', message: 'Docker compose command failed' }, { reward: 1 }] },
        default: { reward: 1 },
      },
      execution: { task_attempts: 3 },
    });
    await withWorker(q, async () => {
      const r = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
      expect(r.nErrors).toBe(0);
      expect(byTask(r)['sum-numbers']).toMatchObject({ status: 'scored', score: 1, runs: 2, nTrials: 1 });
    });
    const runs = runsPerTask(f.invocationLog);
    expect(runs['sum-numbers']).toBe(2);
    for (const t of ['add-cli-flag', 'count-words', 'fix-csv-parser', 'hello-world', 'reverse-string']) expect(runs[t]).toBe(1);
    // The retry resumed the same Harbor job dir: the infra-failed trial was pruned, only the new one remains.
    const ends = invocations(f.invocationLog).filter((i) => i.event === 'end' && taskOf(i) === 'sum-numbers');
    expect(ends).toHaveLength(2);
    const jobDirs = new Set(ends.map((i) => i.job_dir));
    expect(jobDirs.size).toBe(1);
  });

  test.concurrent('errors are never silent zeros: error rate over the threshold fails the evaluation and says so', async () => {
    const q = uniqueQueue('errors');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      scenario: { tasks: { 'hello-world': { reward_file: 'missing' }, 'count-words': { result_json: 'garbage' } }, default: { reward: 1 } },
      execution: { task_attempts: 2 },
      scoring: { error_rate_threshold: 0.3 },
    });
    await withWorker(q, async () => {
      const r = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
      expect(r).toMatchObject({ nTasks: 6, nScored: 4, nErrors: 2, status: 'failed', errorsCountedAsZero: true });
      expect(r.score).toBeCloseTo(4 / 6);
      expect(r.scoreOfScored).toBe(1);
      const t = byTask(r);
      expect(t['hello-world']).toMatchObject({ status: 'error', score: null, runs: 2 });
      expect(t['hello-world']!.error).toMatch(/RewardFileNotFoundError/);
      expect(t['count-words']!.error).toMatch(/unreadable result\.json/);
      // An error row points at the job harbor wrote for that task (its trials and logs say why), not the jobs dir.
      const jobDirsOf = (task: string) =>
        new Set(
          invocations(f.invocationLog)
            .filter((i) => i.event === 'end' && taskOf(i) === task)
            .map((i) => i.job_dir),
        );
      for (const task of ['hello-world', 'count-words']) {
        expect([...jobDirsOf(task)]).toEqual([t[task]!.jobDir]);
        expect(fs.existsSync(path.join(t[task]!.jobDir, 'config.json'))).toBe(true);
      }
    });
  });

  test.concurrent('the task timeout stops harbor and salvages the trials that finished', async () => {
    const q = uniqueQueue('timeout');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      scenario: { tasks: { 'hello-world': [{ reward: 1 }, { process: 'hang' }] } },
      harbor: { n_attempts: 2, n_concurrent_trials: 1 },
      tasks: { names: ['hello-world'] },
      execution: { task_timeout: '10s', task_attempts: 1 }, // room for the first trial to finish on a loaded machine
    });
    await withWorker(q, async () => {
      const r = byTask((await (await evaluate(f, 'improved')).handle.result()) as CandidateResult);
      // The hung trial was interrupted: Harbor records it as CancelledError, the finished one is kept.
      expect(r['hello-world']).toMatchObject({ status: 'scored', score: 1, nTrials: 2, timedOut: true, exceptions: ['CancelledError'] });
    });
    const pids = invocations(f.invocationLog)
      .filter((i) => i.event === 'start')
      .map((i) => i.pid);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  });

  test.concurrent('a name mismatch between requested tasks and trials fails loudly instead of scoring zeros', async () => {
    const q = uniqueQueue('mismatch');
    const dir = tempDir();
    // A launcher that runs a different task than the one asked for (as an org/name vs dir-name mix-up would).
    const wrapper = path.join(dir, 'harbor-wrong-task');
    fs.writeFileSync(
      wrapper,
      `#!/bin/bash\nargs=()\nprev=\nfor a in "$@"; do [ "$prev" = -i ] && a=count-words; args+=("$a"); prev="$a"; done\nexec ${STANDIN} "\${args[@]}"\n`,
      { mode: 0o755 },
    );
    const f = evalFixture({ taskQueue: q, address: address(), harbor: { command: [wrapper] }, tasks: { names: ['hello-world'] } });
    await withWorker(q, async () => {
      const err = await (await evaluate(f, 'improved')).handle.result().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(String((err as WorkflowFailedError).cause?.message)).toMatch(/none matches the requested task name/);
    });
    expect(runsPerTask(f.invocationLog)['count-words']).toBe(1); // not retried: non-retryable
  });

  test.concurrent('a bad agent kwarg or task filter fails the evaluation in the preflight dry run, before any task runs', async () => {
    const q = uniqueQueue('preflight');
    const f = evalFixture({ taskQueue: q, address: address(), harbor: { agent: 'no-such-agent' } });
    await withWorker(q, async () => {
      const { handle } = await evaluate(f, 'improved');
      const err = (await handle.result().catch((e: unknown) => e)) as WorkflowFailedError;
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(String(err.cause?.message)).toMatch(
        /harbor preflight \(--dry-run\) failed: Dry run failed: Unknown agent name: no-such-agent/,
      );
    });
    expect(runsPerTask(f.invocationLog)).toEqual({}); // no task ran
    expect(preflights(f.invocationLog)).toHaveLength(1);
  });

  test.concurrent('a typo in the agent class fails in the preflight as Harbor refuses it, instead of scoring like an agent', async () => {
    const q = uniqueQueue('agenttypo');
    const f = evalFixture({ taskQueue: q, address: address(), harbor: { agent: 'agent:SkilAgent' } });
    await withWorker(q, async () => {
      const err = (await (await evaluate(f, 'improved')).handle.result().catch((e: unknown) => e)) as WorkflowFailedError;
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(String(err.cause?.message)).toMatch(
        /harbor preflight \(--dry-run\) failed: Dry run failed: agents\[0\]: Module 'agent' has no class 'SkilAgent'/,
      );
    });
    expect(runsPerTask(f.invocationLog)).toEqual({});
  });

  test.concurrent(
    "under Harbor 0.26 an unknown --ek key fails in the preflight as a config error, in Harbor's own words, never retried",
    async () => {
      const q = uniqueQueue('strictek');
      const f = evalFixture({
        taskQueue: q,
        address: address(),
        harbor: { environment_kwargs: { bogus_key: 1 }, env: { HARBOR_STANDIN_VERSION: '0.26.0' } },
        tasks: { names: ['hello-world'] },
      });
      await withWorker(q, async () => {
        const err = (await (await evaluate(f, 'improved')).handle.result().catch((e: unknown) => e)) as WorkflowFailedError;
        expect(err).toBeInstanceOf(WorkflowFailedError);
        expect((err.cause as ApplicationFailure).type).toBe('HarborConfigError'); // exit 2, not retried
        expect(String(err.cause?.message)).toContain(
          "harbor preflight (--dry-run) failed: Invalid kwargs for environment 'docker': Unknown option 'bogus_key'. See harbor environment schema docker for available options.",
        );
      });
      expect(runsPerTask(f.invocationLog)).toEqual({});
      expect(preflights(f.invocationLog)).toHaveLength(1);
    },
  );

  test.concurrent('a missing harbor binary is a non-retryable error that names the launcher', async () => {
    const q = uniqueQueue('nobin');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      harbor: { command: ['/nonexistent/harbor'] },
      tasks: { names: ['hello-world'] },
    });
    await withWorker(q, async () => {
      const { handle } = await evaluate(f, 'improved');
      const err = (await handle.result().catch((e: unknown) => e)) as WorkflowFailedError;
      expect(err).toBeInstanceOf(WorkflowFailedError);
      expect(String(err.cause?.message)).toMatch(/harbor launcher not found: "\/nonexistent\/harbor"/);
      // The preflight found it once, before any task (no chunk workflow was started).
      const history = await handle.fetchHistory();
      expect(history.events!.filter((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toHaveLength(0);
      expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'preflightHarbor')).toHaveLength(
        1,
      );
    });
  });

  test.concurrent('starting the same evaluation again attaches or returns the completed one; --force re-runs', async () => {
    const q = uniqueQueue('idem');
    const f = evalFixture({
      taskQueue: q,
      address: address(),
      tasks: { names: ['hello-world'] },
      scenario: { default: { reward: 1, duration_ms: 300 } },
      harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    });
    await withWorker(q, async () => {
      const first = await evaluate(f, 'improved');
      const second = await evaluate(f, 'improved');
      expect(first.mode).toBe('started');
      expect(second.mode).toBe('attached');
      expect(second.input.evalId).toBe(first.input.evalId);
      const r1 = (await first.handle.result()) as CandidateResult;
      const third = await evaluate(f, 'improved');
      expect(third.mode).toBe('existing');
      expect(((await third.handle.result()) as CandidateResult).finishedAt).toBe(r1.finishedAt);
      expect(runsPerTask(f.invocationLog)['hello-world']).toBe(1);
      const forced = await evaluate(f, 'improved', {}, true);
      expect(forced.mode).toBe('started');
      await forced.handle.result();
      expect(runsPerTask(f.invocationLog)['hello-world']).toBe(2);
      // A change that affects the score is a different evaluation.
      const other = await evaluate(f, 'improved', { 'harbor.n_attempts': 2 });
      expect(other.input.evalId).not.toBe(first.input.evalId);
      await other.handle.result();
    });
  });
});

test('a task dir named with a leading dot is listed and collated by the same rule (scored, not an error row)', async () => {
  const ds = tempDir('vero-dot-');
  fs.cpSync(path.join(DATASET, 'hello-world'), path.join(ds, '.hidden'), { recursive: true });
  fs.cpSync(path.join(DATASET, 'count-words'), path.join(ds, 'count-words'), { recursive: true });
  const q = uniqueQueue('dot');
  const f = evalFixture({ taskQueue: q, address: address(), tasks: { source: { path: ds } }, scenario: { default: { reward: 1 } } });
  await withWorker(q, async () => {
    const r = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
    expect(Object.fromEntries((r.tasks ?? []).map((t) => [t.task, [t.status, t.score, t.runs]]))).toEqual({
      '.hidden': ['scored', 1, 1],
      'count-words': ['scored', 1, 1],
    });
  });
});

test('no idle lanes: chunks overlap, so each chunk’s slow task runs beside the others, never more than `concurrency` at once', async () => {
  const q = uniqueQueue('lanes');
  // Chunks of 2 tasks; in each, one task takes 4 s and the other is quick.
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: {
      tasks: {
        'add-cli-flag': { reward: 1, duration_ms: 4000 },
        'fix-csv-parser': { reward: 1, duration_ms: 4000 },
        'reverse-string': { reward: 1, duration_ms: 4000 },
      },
      default: { reward: 1, duration_ms: 200 },
    },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    execution: { concurrency: 3, chunk_size: 2 },
  });
  await withWorker(q, async () => {
    const r = (await (await evaluate(f, 'improved')).handle.result()) as CandidateResult;
    expect(r.nScored).toBe(6);
  });
  const events = invocations(f.invocationLog).map((i) => ({ task: taskOf(i), event: i.event, t: Date.parse(i.time) }));
  events.sort((a, b) => a.t - b.t);
  let inFlight = 0;
  let most = 0;
  for (const e of events) {
    inFlight += e.event === 'start' ? 1 : -1;
    most = Math.max(most, inFlight);
  }
  expect(most).toBeLessThanOrEqual(3);
  // The three slow tasks (one per chunk) all started before the first of them ended: no chunk waited for
  // another chunk's slow task.
  const slow = ['add-cli-flag', 'fix-csv-parser', 'reverse-string'];
  const lastSlowStart = Math.max(...events.filter((e) => e.event === 'start' && slow.includes(e.task)).map((e) => e.t));
  const firstSlowEnd = Math.min(...events.filter((e) => e.event === 'end' && slow.includes(e.task)).map((e) => e.t));
  expect(lastSlowStart).toBeLessThan(firstSlowEnd);
});

test('vero set-concurrency raises and lowers the lanes of a running evaluation: recorded, validated, never more in flight than it says', async () => {
  const q = uniqueQueue('setconc');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    scenario: { default: { reward: 1, duration_ms: 2500 } },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    // Chunks of 4 and 2 tasks: when the lowering comes, the first chunk still has a task to start on the lanes
    // it holds (so it must hand them back), and the lanes then cross to the second chunk.
    execution: { concurrency: 1, chunk_size: 4 },
  });
  const starts = () => invocations(f.invocationLog).filter((i) => i.event === 'start');
  const inFlightAt = (t: number) =>
    invocations(f.invocationLog)
      .filter((i) => i.event === 'start' && Date.parse(i.time) < t)
      .filter(
        (s) => !invocations(f.invocationLog).some((e) => e.event === 'end' && e.invocation === s.invocation && Date.parse(e.time) <= t),
      ).length;
  await withWorker(q, async () => {
    const { handle, input, client: c } = await evaluate(f, 'improved');
    await until('the first task started', async () => starts().length >= 1);
    // Out of range: refused by the workflow's validator, nothing changes.
    await expect(setConcurrency(c, input.evalId, 0)).rejects.toThrow(/refused: concurrency: expected an integer from 1 to 1000/);
    expect(await setConcurrency(c, input.evalId, 3)).toEqual({ previous: 1, concurrency: 3 });
    await until('three tasks in flight', async () => inFlightAt(Date.now()) === 3);
    expect((await getProgress(c, input.evalId)).concurrency).toBe(3);
    expect(await setConcurrency(c, input.evalId, 1)).toEqual({ previous: 3, concurrency: 1 });
    const lowered = Date.now();
    const r = (await handle.result()) as CandidateResult;
    expect(r.nScored).toBe(6);
    // After the lowering was in force, every task started with nothing else in flight.
    const later = starts().filter((s) => Date.parse(s.time) > lowered);
    expect(later.length).toBeGreaterThanOrEqual(1);
    for (const s of later) expect(inFlightAt(Date.parse(s.time))).toBe(0);
    // Never more than 3 at once, and each task ran once.
    for (const s of starts()) expect(inFlightAt(Date.parse(s.time) + 1)).toBeLessThanOrEqual(3);
    expect(Object.values(runsPerTask(f.invocationLog))).toEqual([1, 1, 1, 1, 1, 1]);
    // Both changes are in the history as accepted and completed updates (the refused one is not).
    const events = (await c.workflow.getHandle(input.evalId).fetchHistory()).events ?? [];
    expect(events.filter((e) => e.workflowExecutionUpdateCompletedEventAttributes).length).toBe(2);
    // A finished evaluation's concurrency cannot change.
    await expect(setConcurrency(c, input.evalId, 2)).rejects.toThrow(/has finished \(COMPLETED\)/);
  });
});
