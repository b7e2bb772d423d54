import * as fs from 'node:fs';
import * as path from 'node:path';
import { settingsFrom } from '../../client/eval-input';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { ConfigError } from '../../model/errors';
import { configDigest } from '../../model/evaluation/identity';
import { taskScoresOf } from '../../model/race/paired-comparison';
import { addSpend, capReached, NO_SPEND, type Spend, spendOfTask, spendToAdd } from '../../model/evaluation/spend-cap';
import { NO_USAGE } from '../../model/harbor/trial-ranking';
import { DATASET, tempDir } from '../helpers/fixtures';

const usage = (u: Partial<typeof NO_USAGE>) => ({ ...NO_USAGE, ...u });

test("a task's spend: dollars as reported, tokens are input + output, and a task that reported neither is unmetered", () => {
  expect(spendOfTask(usage({ costUsd: 0.5, inputTokens: 100, outputTokens: 20, cacheTokens: 80 }))).toEqual({
    costUsd: 0.5,
    tokens: 120,
    unmetered: 0,
  });
  expect(spendOfTask(usage({ outputTokens: 7 }))).toEqual({ costUsd: 0, tokens: 7, unmetered: 0 });
  expect(spendOfTask(usage({}))).toEqual({ costUsd: 0, tokens: 0, unmetered: 1 });
  expect(spendOfTask(undefined)).toEqual({ costUsd: 0, tokens: 0, unmetered: 1 });
  expect(addSpend(addSpend(NO_SPEND, { costUsd: 1, tokens: 2, unmetered: 0 }), { costUsd: 0.5, tokens: 3, unmetered: 1 })).toEqual({
    costUsd: 1.5,
    tokens: 5,
    unmetered: 1,
  });
});

test('a cap is reached at its value, not before; the reason names the cap, the spend and the pool', () => {
  expect(capReached({ maxCostUsd: 2 }, { costUsd: 1.99, tokens: 1e9, unmetered: 0 })).toBeNull();
  expect(capReached({ maxCostUsd: 2 }, { costUsd: 2, tokens: 0, unmetered: 0 })).toBe('max_cost_usd $2.00 reached ($2.0000 spent)');
  expect(capReached({ maxTokens: 1000, pool: 'batch' }, { costUsd: 9, tokens: 1000, unmetered: 0 })).toBe(
    'max_tokens 1000 reached (1000 spent in spend pool batch)',
  );
  // Both caps: whichever is reached.
  expect(capReached({ maxCostUsd: 5, maxTokens: 10 }, { costUsd: 1, tokens: 11, unmetered: 0 })).toMatch(/^max_tokens 10 reached/);
});

test('a not_run task is not among the tasks a paired comparison counts; an error is, as 0', () => {
  const scores = taskScoresOf({
    tasks: [
      { task: 'a', status: 'scored', score: 1 },
      { task: 'b', status: 'error', score: null },
      { task: 'c', status: 'not_run', score: null },
    ],
  });
  expect([...scores]).toEqual([
    ['a', 1],
    ['b', 0],
  ]);
});

describe('execution caps in vero.yaml', () => {
  const write = (execution: string): string => {
    const f = path.join(tempDir(), 'vero.yaml');
    fs.writeFileSync(f, `agent_repo: ./repo\ntasks:\n  source:\n    path: ${DATASET}\nexecution:\n${execution}`);
    return f;
  };
  const errorOf = (f: string): string => {
    try {
      loadEvalConfig(f);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('no error');
  };

  test('caps reach the settings; the grace period accepts durations', () => {
    const cfg = loadEvalConfig(write('  max_cost_usd: 12.5\n  max_tokens: 2000000\n  budget_grace: 5 minutes\n  spend_pool: batch-7\n'));
    expect(settingsFrom(cfg).spendCap).toEqual({ maxCostUsd: 12.5, maxTokens: 2000000, graceSec: 300, pool: 'batch-7' });
    expect(settingsFrom(loadEvalConfig(write('  concurrency: 2\n'))).spendCap).toBeUndefined();
  });

  test('a grace period or a pool without a cap, a bad pool name and a non-positive cap are refused, all at once', () => {
    const f = write('  budget_grace: 1m\n  spend_pool: batch\n');
    const message = errorOf(f);
    expect(message).toContain(`${f}: execution.budget_grace: only valid with max_cost_usd or max_tokens`);
    expect(message).toContain(`${f}: execution.spend_pool: only valid with max_cost_usd or max_tokens`);
    const bad = errorOf(write('  max_cost_usd: 0\n  max_tokens: 1.5\n  spend_pool: "a b"\n'));
    expect(bad).toMatch(/execution\.max_cost_usd: .*>0/);
    expect(bad).toMatch(/execution\.max_tokens: .*expected int/);
    expect(bad).toMatch(/execution\.spend_pool: expected a name of letters, digits/);
  });

  test('the caps and the pool are part of the evaluation id (a capped evaluation may end partial); the grace is not', () => {
    const digest = (execution: string) => configDigest(['t'], settingsFrom(loadEvalConfig(write(execution))));
    const capped = digest('  max_cost_usd: 5\n');
    expect(capped).not.toBe(digest('  concurrency: 4\n'));
    expect(capped).not.toBe(digest('  max_cost_usd: 6\n'));
    expect(capped).not.toBe(digest('  max_cost_usd: 5\n  spend_pool: p\n'));
    expect(capped).toBe(digest('  max_cost_usd: 5\n  budget_grace: 30s\n'));
    // Without a cap the digest is what it was before caps existed.
    expect(digest('  concurrency: 2\n')).toBe(digest('  concurrency: 8\n'));
  });
});

test("a task's spend is counted once: a report is the task's total, one sent again adds nothing, a larger one adds the difference", () => {
  const counted: Record<string, Spend> = {};
  const add = (report: Parameters<typeof spendToAdd>[1]) => spendToAdd(counted, report);
  expect(add({ task: 'a', costUsd: 1, tokens: 10, unmetered: 0 })).toEqual({ costUsd: 1, tokens: 10, unmetered: 0 });
  // The same report again (a reset run reports again; a finished job collected again): nothing more.
  expect(add({ task: 'a', costUsd: 1, tokens: 10, unmetered: 0 })).toEqual(NO_SPEND);
  // The job resumed and ran another trial: its total grew, only the growth is added.
  expect(add({ task: 'a', costUsd: 1.5, tokens: 14, unmetered: 0 })).toEqual({ costUsd: 0.5, tokens: 4, unmetered: 0 });
  // A late, older report of the same task adds nothing.
  expect(add({ task: 'a', costUsd: 1, tokens: 10, unmetered: 0 })).toEqual(NO_SPEND);
  expect(add({ task: 'b', costUsd: 0, tokens: 0, unmetered: 1 })).toEqual({ costUsd: 0, tokens: 0, unmetered: 1 });
  expect(add({ task: 'b', costUsd: 0, tokens: 0, unmetered: 1 })).toEqual(NO_SPEND);
  // Reports of histories recorded before name no task: each adds all it says.
  expect(add({ costUsd: 2, tokens: 0, unmetered: 0 })).toEqual({ costUsd: 2, tokens: 0, unmetered: 0 });
  expect(add({ costUsd: 2, tokens: 0, unmetered: 0 })).toEqual({ costUsd: 2, tokens: 0, unmetered: 0 });
  expect(counted).toEqual({ a: { costUsd: 1.5, tokens: 14, unmetered: 0 }, b: { costUsd: 0, tokens: 0, unmetered: 1 } });
});
