/**
 * Conformance: the same jobs through real Harbor (each supported version, on Docker) and through the stand-in
 * imitating that version, compared on what vero and users rely on — the job and trial layout, the fields and
 * formats of the JSON files (0.26's reward validity and error policy included), exit codes and the dry run. The stand-in is given, as a scenario, the outcome each task's verifier produces for real.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DATASET, STANDIN, tempDir } from '../helpers/fixtures';
import { harborBin, describeOrFail, realHarborUnavailable, REWARD_1, writeTask } from '../helpers/real-harbor';
import { collate, loadTrials } from '../../harbor/collate';
import { rewardValidity } from '../../model/harbor/error-policy';
import { DOCKER_TEARDOWN_MS } from '../../harbor-standin/src/scenario';

const unavailable = realHarborUnavailable();
const realDescribe = describeOrFail(unavailable);

jest.setTimeout(300_000);

type Json = Record<string, unknown>;
const readJson = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8')) as Json;

function run(bin: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(bin, args, {
    cwd,
    env: { ...process.env, LITELLM_LOCAL_MODEL_COST_MAP: 'True', HARBOR_STANDIN_TIME_SCALE: '0', ...env },
    encoding: 'utf8',
    input: '',
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** What a job dir looks like, reduced to what must agree: file names, trial name shapes, field types. */
function shape(jobDir: string) {
  const trials = fs
    .readdirSync(jobDir)
    .filter((e) => fs.statSync(path.join(jobDir, e)).isDirectory())
    .sort();
  const byTask: Record<string, Json> = {};
  for (const t of trials) {
    const r = readJson(path.join(jobDir, t, 'result.json'));
    const verifier = r.verifier_result as { rewards?: Json } | null;
    const exc = r.exception_info as { exception_type: string; exception_message?: string } | null;
    const agent = r.agent_result as Json | null;
    byTask[t.split('__')[0]!] = {
      trialName: /^[a-z0-9-]+__[A-Za-z0-9]{7}$/.test(t),
      files: ['config.json', 'result.json', 'trial.log', 'agent', 'verifier'].filter((f) => fs.existsSync(path.join(jobDir, t, f))),
      verifierFiles: fs
        .readdirSync(path.join(jobDir, t, 'verifier'))
        .filter((f) => f.startsWith('reward'))
        .sort(),
      taskName: r.task_name,
      taskIdPath: typeof (r.task_id as Json | undefined)?.path,
      rewards: verifier?.rewards ?? null,
      exception: exc?.exception_type ?? null,
      exceptionMessage: typeof exc?.exception_message,
      // 0.26: whether the reward counts, the policy of the exception, the schema; absent on 0.25.
      rewardValid: 'reward_valid' in r ? r.reward_valid : 'absent',
      schemaVersion: r.schema_version ?? 'absent',
      policy: (exc as { policy?: unknown } | null)?.policy ?? null,
      agentResultKeys: agent ? ['cost_usd', 'n_input_tokens', 'n_output_tokens', 'n_cache_tokens'].filter((k) => k in agent) : null,
      // Harbor's phase timings, as the stand-in writes them: each phase a span, in order, inside the trial's.
      phases: PHASE_FIELDS.filter((k) => typeof (r[k] as Span | null)?.started_at === 'string'),
      phasesInOrder: phasesInOrder(r),
      startedAtZ: String(r.started_at).endsWith('Z'),
      finishedAtZ: String(r.finished_at).endsWith('Z'),
    };
  }
  const lock = readJson(path.join(jobDir, 'lock.json'));
  const job = readJson(path.join(jobDir, 'result.json'));
  // The retry policy, from `-r` merged with a `-c` job config holding the backoff (exclusions are a set).
  const retry = readJson(path.join(jobDir, 'config.json')).retry as Json;
  return {
    retry: { ...retry, exclude_exceptions: [...((retry.exclude_exceptions as string[] | null) ?? [])].sort() },
    jobFiles: ['config.json', 'lock.json', 'job.log', 'result.json'].filter((f) => fs.existsSync(path.join(jobDir, f))),
    lock: { schema_version: lock.schema_version, version: (lock.harbor as Json).version },
    jobTimestampsNaive: !String(job.started_at).endsWith('Z') && !String(job.finished_at).endsWith('Z'),
    jobTotals: { n_total_trials: job.n_total_trials },
    byTask,
  };
}

const VERSIONS = ['0.25.0', '0.26.0'] as const;

interface Span {
  started_at: string;
  finished_at: string;
}
const PHASE_FIELDS = ['environment_setup', 'agent_setup', 'agent_execution', 'verifier'] as const;

/** Whether a trial's phases follow one another inside its own span (its teardown after the last of them). */
function phasesInOrder(r: Json): boolean {
  const spans = PHASE_FIELDS.map((k) => r[k] as Span | null).filter((x): x is Span => x !== null && x !== undefined);
  const times = [r.started_at as string, ...spans.flatMap((x) => [x.started_at, x.finished_at]), r.finished_at as string].map((t) =>
    Date.parse(t),
  );
  return times.every((t, i) => Number.isFinite(t) && (i === 0 || t >= times[i - 1]!));
}

/** Each trial's time after its last phase until it finished (Harbor's teardown of its environment), in ms. */
function teardownsMs(jobDir: string): number[] {
  return fs
    .readdirSync(jobDir)
    .filter((t) => fs.statSync(path.join(jobDir, t)).isDirectory())
    .map((t) => {
      const r = readJson(path.join(jobDir, t, 'result.json'));
      const last = PHASE_FIELDS.map((k) => r[k] as Span | null)
        .filter((x): x is Span => Boolean(x))
        .pop();
      return Date.parse(r.finished_at as string) - Date.parse(last!.finished_at);
    });
}

/**
 * The stand-in's `docker` teardown profile (HARBOR_STANDIN_TEARDOWN_MS=docker) is Harbor's on Docker: the median
 * real wait after the verifier is within this factor of the modelled one, either way.
 */
const TEARDOWN_FACTOR = 2;

realDescribe.each(VERSIONS)('the stand-in conforms to real Harbor %s', (version) => {
  test('one job: layout, JSON fields and formats, rewards and exceptions; resume and lock mismatch; dry run', () => {
    const ds = tempDir('vero-conf-ds-');
    fs.cpSync(path.join(DATASET, 'hello-world'), path.join(ds, 'hello-world'), { recursive: true });
    writeTask(ds, 'multi-reward', { test: `echo '{"pass": 1, "tests_passed": 3}' > /logs/verifier/reward.json`, solve: 'true' });
    writeTask(ds, 'no-reward', { test: 'true', solve: 'true' });
    // A symlinked task dir: Harbor follows it and runs it (the stand-in, and vero's task listing, must too).
    const elsewhere = tempDir('vero-conf-linked-');
    fs.cpSync(path.join(DATASET, 'count-words'), path.join(elsewhere, 'linked'), { recursive: true });
    fs.symlinkSync(path.join(elsewhere, 'linked'), path.join(ds, 'linked'));
    writeTask(ds, 'image-only', {
      toml: '[environment]\ndocker_image = "vero-base:bookworm"\n',
      dockerfile: null,
      test: REWARD_1,
      solve: 'true',
    });
    const scenario = JSON.stringify({
      tasks: { 'multi-reward': { rewards: { pass: 1, tests_passed: 3 } }, 'no-reward': { reward_file: 'missing' } },
      default: { reward: 1 },
    });
    const real = harborBin(version);
    const shapes: Json[] = [];
    const realTeardowns: number[] = [];
    for (const [bin, env] of [
      [real, {}],
      [STANDIN, { HARBOR_STANDIN_SCENARIO: scenario, HARBOR_STANDIN_VERSION: version }],
    ] as const) {
      const cwd = tempDir('vero-conf-cwd-');
      const jobs = path.join(cwd, 'jobs');
      const jobConfig = path.join(cwd, 'job-config.json');
      fs.writeFileSync(jobConfig, JSON.stringify({ retry: { wait_multiplier: 2, min_wait_sec: 0.5, max_wait_sec: 30 } }));
      const args = ['run', '-p', ds, '-a', 'oracle', '-o', jobs, '--job-name', 'j', '-y', '-q', '-n', '4', '-r', '2', '-c', jobConfig];
      const dry = run(bin, [...args, '--dry-run'], cwd, env);
      expect({ bin, code: dry.code, ok: /Dry run OK — 5 trial\(s\); nothing was run\./.test(dry.out) }).toEqual({ bin, code: 0, ok: true });
      expect(fs.existsSync(jobs)).toBe(false);
      const badDry = run(bin, [...args.filter((a) => a !== '-n' && a !== '4'), '-i', 'nosuch', '--dry-run'], cwd, env);
      expect({ bin, code: badDry.code, msg: /Dry run failed: No tasks matched the filter\(s\)/.test(badDry.out) }).toEqual({
        bin,
        code: 1,
        msg: true,
      });
      expect(run(bin, args, cwd, env).code).toBe(0);
      shapes.push(shape(path.join(jobs, 'j')));
      if (bin === real) realTeardowns.push(...teardownsMs(path.join(jobs, 'j')));
      // The same argv again resumes (nothing left to run); changed task files are refused.
      expect(run(bin, args, cwd, env).code).toBe(0);
      fs.appendFileSync(path.join(ds, 'hello-world', 'tests', 'test.sh'), `\n# touched by ${path.basename(bin)}\n`);
      const refused = run(bin, args, cwd, env);
      expect({ bin, code: refused.code, lock: /lock\.json that does not match the resolved job lock/.test(refused.out) }).toEqual({
        bin,
        code: 1,
        lock: true,
      });
    }
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[0]!.lock).toMatchObject({ version });
    expect(Object.values(shapes[0]!.byTask as Json).map((t) => (t as Json).phasesInOrder)).toEqual([true, true, true, true, true]);
    const median = [...realTeardowns].sort((a, b) => a - b)[Math.floor(realTeardowns.length / 2)]!;
    const within = median >= DOCKER_TEARDOWN_MS / TEARDOWN_FACTOR && median <= DOCKER_TEARDOWN_MS * TEARDOWN_FACTOR;
    expect({ trials: realTeardowns.length, realMedianMs: median, standinMs: DOCKER_TEARDOWN_MS, within }).toEqual({
      trials: 5,
      realMedianMs: median,
      standinMs: DOCKER_TEARDOWN_MS,
      within: true,
    });
    expect(Object.keys(shapes[0]!.byTask as Json)).toContain('linked');
    expect(shapes[0]!.retry).toMatchObject({ max_retries: 2, wait_multiplier: 2, min_wait_sec: 0.5, max_wait_sec: 30 });
    // And the shape is what vero reads: rewards per key, Harbor's exception for a missing reward.
    expect((shapes[0]!.byTask as Json)['no-reward']).toMatchObject({ exception: 'RewardFileNotFoundError', exceptionMessage: 'string' });
    expect((shapes[0]!.byTask as Json)['multi-reward']).toMatchObject({
      rewards: { pass: 1, tests_passed: 3 },
      verifierFiles: ['reward.json'],
    });
    // 0.26 says which rewards count: a missing reward file is no valid reward (0.25 does not say).
    const validity = (t: string) => ((shapes[0]!.byTask as Json)[t] as Json).rewardValid;
    expect([validity('hello-world'), validity('no-reward')]).toEqual(version === '0.25.0' ? ['absent', 'absent'] : [true, false]);
  });
  test('an agent Harbor cannot import is refused before the job starts, in the dry run and in the run, with the same words', () => {
    const agentDir = tempDir('vero-conf-agent-');
    fs.writeFileSync(path.join(agentDir, 'agent.py'), 'x = 1\n');
    const oneLine = (s: string) => s.replace(/\s+/g, ' ');
    for (const bin of [harborBin(version), STANDIN]) {
      const cwd = tempDir('vero-conf-cwd-');
      const jobs = path.join(cwd, 'jobs');
      const env = { PYTHONPATH: agentDir, HARBOR_STANDIN_VERSION: version };
      const base = ['run', '-p', DATASET, '-i', 'hello-world', '-o', jobs, '--job-name', 'j', '-y', '-q'];
      const noModule = run(bin, [...base, '-a', 'nosuch.module:Agent', '--dry-run'], cwd, env);
      expect({ bin, code: noModule.code, out: oneLine(noModule.out) }).toEqual({
        bin,
        code: 1,
        out: expect.stringContaining("Dry run failed: agents[0]: Failed to import module 'nosuch.module': No module named 'nosuch'"),
      });
      const noClass = run(bin, [...base, '-a', 'agent:SkilAgent', '--dry-run'], cwd, env);
      expect({ bin, code: noClass.code, out: oneLine(noClass.out) }).toEqual({
        bin,
        code: 1,
        out: expect.stringContaining("Dry run failed: agents[0]: Module 'agent' has no class 'SkilAgent'"),
      });
      const runIt = run(bin, [...base, '-a', 'nosuch.module:Agent'], cwd, env);
      expect({ bin, code: runIt.code, out: oneLine(runIt.out), jobDir: fs.existsSync(path.join(jobs, 'j')) }).toEqual({
        bin,
        code: 1,
        out: expect.stringContaining("Failed to import module 'nosuch.module': No module named 'nosuch'"),
        jobDir: false,
      });
    }
  });
});

/** An agent that does the task's work, then raises the exception its instruction names (by Harbor's type name). */
const RAISING_AGENT = `from harbor.agents.base import BaseAgent


class RateLimitError(Exception):
    pass


class BudgetExceededError(Exception):
    pass


class NonZeroAgentExitCodeError(Exception):
    pass


RAISES = {c.__name__: c for c in (RateLimitError, BudgetExceededError, NonZeroAgentExitCodeError)}


class RaisingAgent(BaseAgent):
    @staticmethod
    def name() -> str:
        return "raising-agent"

    def version(self) -> str:
        return "1.0.0"

    async def setup(self, environment) -> None:
        return

    async def run(self, instruction, environment, context) -> None:
        await environment.exec("touch /app/done")
        raise RAISES[instruction.strip().splitlines()[-1]]("raised after the work was done")
`;

realDescribe('reward validity: vero agrees with Harbor 0.26, on both versions', () => {
  test('a model-provider error or a budget refusal after the work is done is no valid score; the agent’s own failure is', () => {
    const ds = tempDir('vero-conf-valid-ds-');
    const raises = {
      'rate-limited': 'RateLimitError',
      'budget-refused': 'BudgetExceededError',
      'agent-failed': 'NonZeroAgentExitCodeError',
    };
    for (const [task, type] of Object.entries(raises))
      writeTask(ds, task, {
        instruction: `# ${task}\n\n${type}\n`,
        test: 'if [ -f /app/done ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt',
        solve: 'true',
      });
    const agentDir = tempDir('vero-conf-raising-');
    fs.writeFileSync(path.join(agentDir, 'raising_agent.py'), RAISING_AGENT);
    const verdicts: Record<string, Json> = {};
    for (const version of VERSIONS) {
      const cwd = tempDir('vero-conf-cwd-');
      const jobs = path.join(cwd, 'jobs');
      const args = ['run', '-p', ds, '-a', 'raising_agent:RaisingAgent', '-o', jobs, '--job-name', 'j', '-y', '-q', '-n', '3'];
      run(harborBin(version), args, cwd, { PYTHONPATH: agentDir });
      const loaded = loadTrials(path.join(jobs, 'j'));
      const byTask: Json = {};
      for (const t of loaded.trials) {
        const ours = rewardValidity(t.result);
        byTask[t.result.task_name!] = {
          exception: t.result.exception_info?.exception_type ?? null,
          rewarded: t.result.verifier_result?.rewards != null,
          harbors: 'reward_valid' in t.result ? t.result.reward_valid : 'not said',
          ours: ours.valid,
        };
      }
      const rows = collate(loaded.trials, { requested: Object.keys(raises) });
      verdicts[version] = { byTask, rows: Object.fromEntries(rows.map((r) => [r.task, { status: r.status, score: r.score }])) };
    }
    // Harbor 0.26's own verdict, and ours from the same file, and ours from 0.25's file (the table by type): one answer.
    const expected = { 'rate-limited': false, 'budget-refused': false, 'agent-failed': true };
    for (const [task, valid] of Object.entries(expected)) {
      const on026 = (verdicts['0.26.0']!.byTask as Record<string, Json>)[task]!;
      const on025 = (verdicts['0.25.0']!.byTask as Record<string, Json>)[task]!;
      expect({ task, ...on026 }).toEqual({
        task,
        exception: raises[task as keyof typeof raises],
        rewarded: true,
        harbors: valid,
        ours: valid,
      });
      // 0.25 grades no trial whose agent raised, and does not say; the table by type gives 0.26's answer.
      expect({ task, ...on025 }).toEqual({
        task,
        exception: raises[task as keyof typeof raises],
        rewarded: false,
        harbors: 'not said',
        ours: valid,
      });
    }
    // The rows: an invalid reward is never the candidate's score (an error row), the agent's own failure is scored.
    for (const version of VERSIONS) {
      const rows = verdicts[version]!.rows as Record<string, Json>;
      expect(rows['rate-limited']).toMatchObject({ status: 'error' });
      expect(rows['budget-refused']).toMatchObject({ status: 'error' });
      // 0.26 grades it and the reward counts; 0.25 never graded it (no reward: an error row, as before).
      expect(rows['agent-failed']).toEqual(version === '0.25.0' ? { status: 'error', score: null } : { status: 'scored', score: 1 });
    }
  });
});
