import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { ConfigError } from '../../model/errors';
import { configDigest, evalWorkflowId } from '../../model/evaluation/identity';
import { resolveTasks } from '../../harbor/task-source';
import { settingsFrom } from '../../client/eval-input';
import { DATASET, tempDir } from '../helpers/fixtures';

function write(text: string): string {
  const dir = tempDir();
  const f = path.join(dir, 'vero.yaml');
  fs.writeFileSync(f, text);
  return f;
}

const minimal = `agent_repo: ./repo\ntasks:\n  source:\n    path: ${DATASET}\n`;

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('no error');
}

test('defaults, and relative paths resolve against the file', () => {
  const f = write(`${minimal}harbor:\n  command: ../bin/harbor --flag\n`);
  const cfg = loadEvalConfig(f);
  expect(cfg.agent_repo).toBe(path.join(path.dirname(f), 'repo'));
  expect(cfg.harbor.command).toEqual([path.resolve(path.dirname(f), '../bin/harbor'), '--flag']);
  expect(cfg.harbor).toMatchObject({ agent: 'oracle', n_attempts: 1, max_retries: 0 });
  expect(cfg.scoring).toEqual({ aggregate: 'best', error_rate_threshold: 0.25 });
  expect(cfg.execution).toMatchObject({ concurrency: 4, task_timeout: 7200, task_attempts: 3 });
  expect(cfg.temporal).toEqual({ address: '127.0.0.1:7233', namespace: 'default', task_queue: 'vero-harbor' });
});

test('unknown keys, wrong types and bad values name the file and the field', () => {
  const f = write(`${minimal}harbor:\n  n_atempts: 3\n`);
  expect(errorOf(() => loadEvalConfig(f))).toBe(`${f}: harbor.n_atempts: unknown key (did you mean n_attempts?)`);
  const g = write(`${minimal}execution:\n  concurrency: many\n  task_timeout: soon\n`);
  const msg = errorOf(() => loadEvalConfig(g));
  expect(msg).toContain(`${g}: execution.concurrency: Invalid input: expected number, received string`);
  expect(msg).toContain('execution.task_timeout');
  const h = write(`agent_repo: r\ntasks:\n  source: {path: a, dataset: b}\n`);
  expect(errorOf(() => loadEvalConfig(h))).toContain(
    'tasks.source: expected exactly one of `path` (local tasks, -p) or `dataset` (registry, -d)',
  );
  expect(errorOf(() => loadEvalConfig(write('agent_repo: [unclosed\n')))).toMatch(/not valid YAML/);
  expect(errorOf(() => loadEvalConfig('/nonexistent/vero.yaml'))).toBe('/nonexistent/vero.yaml: cannot read the config file (ENOENT)');
  expect(errorOf(() => loadEvalConfig(write(`${minimal}harbor:\n  extra_args: ["-k", "2"]\n`)))).toContain(
    'harbor.extra_args: -k is set by vero-harbor',
  );
});

test('CLI overrides are validated like the file', () => {
  const f = write(minimal);
  expect(loadEvalConfig(f, { 'harbor.n_attempts': 4 }).harbor.n_attempts).toBe(4);
  expect(errorOf(() => loadEvalConfig(f, { 'harbor.n_attempts': 0 }))).toMatch(/harbor\.n_attempts: Too small/);
});

test('task resolution: all, names, globs, partitions; unknown names are errors', () => {
  const all = ['add-cli-flag', 'count-words', 'fix-csv-parser', 'hello-world', 'reverse-string', 'sum-numbers'];
  expect(resolveTasks(loadEvalConfig(write(minimal)))).toEqual(all);
  expect(resolveTasks(loadEvalConfig(write(`${minimal}  include: ["*-word*", "sum-*"]\n  exclude: ["count-*"]\n`)))).toEqual([
    'sum-numbers',
  ]);
  expect(errorOf(() => resolveTasks(loadEvalConfig(write(`${minimal}  names: [hello-world, mini-bench/hello-world]\n`))))).toMatch(
    /unknown task name\(s\) mini-bench\/hello-world/,
  );
  const dir = tempDir();
  fs.writeFileSync(path.join(dir, 'splits.yaml'), 'splits:\n  train: [hello-world, count-words]\n  test: [sum-numbers]\n');
  const p = write(`${minimal}  partition: {file: ${path.join(dir, 'splits.yaml')}, split: train}\n`);
  expect(resolveTasks(loadEvalConfig(p))).toEqual(['count-words', 'hello-world']);
  const q = write(`${minimal}  partition: {file: ${path.join(dir, 'splits.yaml')}, split: valid}\n`);
  expect(errorOf(() => resolveTasks(loadEvalConfig(q)))).toMatch(/"valid" is not a split .* \(splits: train, test\)/);
  expect(errorOf(() => resolveTasks(loadEvalConfig(write(`agent_repo: r\ntasks:\n  source: {path: /nonexistent}\n`))))).toBe(
    'tasks.source.path: /nonexistent does not exist',
  );
});

test('the evaluation id changes with what changes the score, not with operational settings', () => {
  const f = write(minimal);
  const id = (o: Record<string, unknown>) => {
    const cfg = loadEvalConfig(f, o);
    return evalWorkflowId('a'.repeat(40), configDigest(resolveTasks(cfg), settingsFrom(cfg)));
  };
  const base = id({});
  expect(base).toMatch(/^eval-a{40}-[0-9a-f]{16}$/);
  expect(id({ 'execution.concurrency': 9, 'execution.task_timeout': 5, 'temporal.task_queue': 'other' })).toBe(base);
  expect(id({ 'harbor.n_attempts': 2 })).not.toBe(base);
  expect(id({ 'scoring.aggregate': 'mean' })).not.toBe(base);
  expect(id({ 'tasks.names': ['hello-world'] })).not.toBe(base);
  expect(id({ 'harbor.model': 'x/y' })).not.toBe(base);
});

test('an unknown key close to a known one says which was meant; durations take the forms people write', () => {
  const f = write(
    `${minimal}harbor:\n  agent: a:B\n  n_atempts: 2\nexecution:\n  task_timeout: 10 minutes\n  heartbeat_timeout: 1d\n  stop_grace: soon\n`,
  );
  expect(errorOf(() => loadEvalConfig(f)).split('\n')).toEqual([
    `${f}: harbor.n_atempts: unknown key (did you mean n_attempts?)`,
    `${f}: execution.stop_grace: expected a duration: a number of seconds, or a number with a unit: ms, s, m (min), h (hours) or d (days), e.g. 90s, 30m, 2h, 1d; got "soon"`,
  ]);
  const ok = write(`${minimal}execution:\n  task_timeout: 10 minutes\n  heartbeat_timeout: 1d\n`);
  expect(loadEvalConfig(ok).execution).toMatchObject({ task_timeout: 600, heartbeat_timeout: 86400 });
});

test('a number beyond a double (YAML 1e309 is Infinity) says a finite number was expected', () => {
  const f = write(`${minimal}execution:\n  max_cost_usd: 1e309\n  max_tokens: -.inf\n`);
  const msg = errorOf(() => loadEvalConfig(f));
  expect(msg).toContain(`${f}: execution.max_cost_usd: expected a finite number, got infinity (a number beyond ±1.8e308)`);
  expect(msg).toContain(`${f}: execution.max_tokens: expected a finite number, got infinity (a number beyond ±1.8e308)`);
});
