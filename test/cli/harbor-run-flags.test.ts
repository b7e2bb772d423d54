/**
 * `vero start-eval` and `vero race` take `harbor run`'s own flags, with Harbor's names and meaning, as an overlay
 * on vero.yaml that is part of the evaluation's identity: the real command with --print-config (nothing starts,
 * no server). A value Harbor would refuse is refused by the flag's name; an evaluation started without these
 * flags keeps the id it had before they existed.
 */
import { settingsFrom } from '../../client/eval-input';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { resolveTasks } from '../../harbor/task-source';
import { configDigest } from '../../model/evaluation/identity';
import type { EvalSettings } from '../../model/evaluation/input';
import { parseKwarg } from '../../cli/override-flags';
import { evalFixture } from '../helpers/fixtures';
import { runVero } from '../helpers/process';

jest.setTimeout(120_000);

const f = evalFixture({
  taskQueue: 'nobody',
  address: '127.0.0.1:1',
  harbor: { agent_kwargs: { temperature: 0.2 }, agent_env: { KEEP: 'yes' } },
});

interface Printed {
  evalId: string;
  configDigest: string;
  tasks: string[];
  settings: EvalSettings;
}

async function printConfig(...flags: string[]): Promise<Printed> {
  const r = await runVero([
    'start-eval',
    '-c',
    f.configFile,
    '--candidate',
    'improved',
    '--print-config',
    '--address',
    '127.0.0.1:1',
    ...flags,
  ]);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Printed;
}

test("Harbor's flags set what they set in harbor run, over vero.yaml", async () => {
  const plain = await printConfig();
  const p = await printConfig(
    ...['-a', 'terminus-2', '-m', 'openai/gpt-5', '--ak', 'n=3', '--ak', 'verbose=True', '--ak', 'name=x', '--ae', 'A=1'],
    ...['-i', '*-*', '-i', 'hello*', '-x', 'add-*', '-l', '2', '-k', '3'],
  );
  expect(p.settings.harbor).toMatchObject({
    agent: 'terminus-2',
    model: 'openai/gpt-5',
    // JSON first, then Python's literals, else a string; merged over vero.yaml's.
    agent_kwargs: { temperature: 0.2, n: 3, verbose: true, name: 'x' },
    agent_env: { KEEP: 'yes', A: '1' },
    n_attempts: 3,
  });
  // -i any of the globs, then -x, then the first -l in task-name order.
  expect(p.tasks).toEqual(['count-words', 'fix-csv-parser']);
  expect(plain.tasks).toHaveLength(6);
  // Part of the identity: another evaluation.
  expect(p.evalId).not.toBe(plain.evalId);
  expect((await printConfig('-m', 'openai/gpt-5')).evalId).not.toBe(plain.evalId);
  // The same values as vero.yaml's: the same evaluation.
  expect((await printConfig('-a', 'agent:SkillAgent', '-m', 'anthropic/claude-sonnet-4-5', '--ak', 'temperature=0.2')).evalId).toBe(
    plain.evalId,
  );
  // The spellings users type for them.
  expect((await printConfig('--include', 'hello*', '--limit', '1')).tasks).toEqual(['hello-world']);
});

test('a value Harbor would refuse is refused by the flag that gave it, before anything starts', async () => {
  const refused = async (flags: string[], message: RegExp) => {
    const r = await runVero(['start-eval', '-c', f.configFile, '--candidate', 'improved', '--address', '127.0.0.1:1', ...flags]);
    expect([flags, r.code, r.stderr]).toEqual([flags, 2, expect.stringMatching(message)]);
    expect(r.stdout).toBe('');
  };
  await refused(['--ak', 'temperature'], /--ak: expected KEY=VALUE, got "temperature"/);
  await refused(['--ae', 'NOEQUALS'], /--ae: expected KEY=VALUE, got "NOEQUALS"/);
  await refused(['--ae', '1BAD=x'], /error: --agent-env: Invalid key in record \(harbor.agent_env.1BAD\)/);
  await refused(['--ak', 'l=[1,2]'], /error: --agent-kwarg: Invalid input \(harbor.agent_kwargs.l\)/);
  await refused(['-l', '0'], /error: --n-tasks: Too small: expected number to be >=1 \(tasks.limit\)/);
  await refused(['-l', 'x'], /-l\/--n-tasks: expected a whole number, got "x"/);
  await refused(['-k', '0'], /error: --n-attempts: Too small: expected number to be >=1 \(harbor.n_attempts\)/);
  await refused(['-m', 'a/b', '-m', 'c/d'], /-m\/--model: given twice/);
  await refused(['-a', ''], /error: --agent: Too small/);
  await refused(['-i', 'nothing-matches*'], /tasks: the selection is empty: no task left by tasks.include \(-i\) \["nothing-matches\*"\]/);
});

test('vero race takes them too, for every candidate', async () => {
  const r = await runVero(['race', 'baseline', 'improved', '-c', f.configFile, '--address', '127.0.0.1:1', '-m', 'a/b', '-m', 'c/d']);
  expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/-m\/--model: given twice/)]);
  const help = await runVero(['race', '--help']);
  for (const flag of [
    '-a, --agent',
    '-m, --model',
    '--ak, --agent-kwarg',
    '--ae, --agent-env',
    '-i, --include-task-name',
    '-x, --exclude-task-name',
    '-l, --n-tasks',
    '-k, --n-attempts',
  ])
    expect([flag, help.stdout.includes(flag)]).toEqual([flag, true]);
});

test('an evaluation started without the new flags keeps its id: the digest of a fixed config is the one it always was', () => {
  const settings = {
    harbor: {
      command: ['harbor'],
      agent: 'agent:SkillAgent',
      model: 'anthropic/claude-sonnet-4-5',
      agent_kwargs: { temperature: 0.2 },
      agent_env: {},
      environment_kwargs: {},
      n_attempts: 1,
      max_retries: 0,
      retry_include: [],
      retry_exclude: [],
      env: {},
      extra_args: [],
    },
    source: { path: '/data/bench' },
    rewardKey: null,
    aggregate: 'best',
    errorRateThreshold: 0.25,
    concurrency: 4,
    taskTimeoutSec: 7200,
    taskAttempts: 3,
    heartbeatTimeoutSec: 60,
    chunkSize: 500,
    stopGraceSec: 60,
    preflight: true,
  } as unknown as EvalSettings;
  // Recorded before Harbor's flags existed.
  expect(configDigest(['a', 'b', 'c'], settings)).toBe('089939be15c9a274f05bc944d86f852320189107361286766edcb2778ac38123');
  // And a vero.yaml loaded without flags is what it is with no overlay at all.
  const cfg = loadEvalConfig(f.configFile);
  expect(configDigest(resolveTasks(cfg), settingsFrom(cfg))).toBe(
    configDigest(resolveTasks(loadEvalConfig(f.configFile, {}, {})), settingsFrom(cfg)),
  );
});

test("--ak values as Harbor's parse_kwargs reads them", () => {
  expect(parseKwarg('--ak', 'n=3')).toEqual(['n', 3]);
  expect(parseKwarg('--ak', 'x=true')).toEqual(['x', true]);
  expect(parseKwarg('--ak', 'x=False')).toEqual(['x', false]);
  expect(parseKwarg('--ak', 'x=None')).toEqual(['x', null]);
  expect(parseKwarg('--ak', 'x=a=b')).toEqual(['x', 'a=b']);
  expect(parseKwarg('--ak', 'x="q"')).toEqual(['x', 'q']);
  expect(() => parseKwarg('--ak', '=3')).toThrow('--ak: expected KEY=VALUE, got "=3"');
});
