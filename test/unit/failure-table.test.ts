/** The one failure table: the workflows' non-retryable list and every typed failure derive from it. */
import {
  DemoFailedError,
  TemporalUnreachableError,
  VeroError,
  WorkflowRunFailedError,
  exitCodeForFailure,
  typedFailure,
} from '../../model/errors';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';
import { ApplicationFailureCategory } from '@temporalio/common';
import { CONFIG_FAILURES, FAILURES, FailureType } from '../../model/failures';

test('the non-retryable list of the workflows is the config failures of the table, in the order histories recorded', () => {
  // The list recorded in every workflow history so far (activity retry policies): it must not change.
  expect(CONFIG_FAILURES).toEqual([
    'AgentRepoNotFound',
    'CandidateNotFound',
    'HarborNotFound',
    'HarborUsageError',
    'HarborConfigError',
    'TaskNameMismatch',
    'InvalidInput',
    'ConfigError',
  ]);
  // A config failure is never retryable.
  for (const t of CONFIG_FAILURES) expect(FAILURES[t].retryable).toBe(false);
});

test('every failure type has a rule; typedFailure takes its retryability from it; exit codes per type', () => {
  expect(Object.keys(FAILURES).sort()).toEqual(Object.values(FailureType).sort());
  for (const t of Object.values(FailureType)) {
    const f = typedFailure(t, 'm');
    expect({ type: f.type, nonRetryable: f.nonRetryable }).toEqual({ type: t, nonRetryable: !FAILURES[t].retryable });
  }
  expect(typedFailure(FailureType.HarborUnavailable, 'docker down').nonRetryable).toBe(false);
  expect(typedFailure(FailureType.HarborConfigError, 'bad task').nonRetryable).toBe(true);
  expect(exitCodeForFailure('HarborConfigError')).toBe(2);
  expect(exitCodeForFailure('HarborTaskError')).toBe(1);
  expect(exitCodeForFailure('TemporalUnreachable')).toBe(3);
  expect(exitCodeForFailure('SomethingElse')).toBe(1);
  expect(exitCodeForFailure(null)).toBe(1);
});

test('an expected failure (a task attempt whose trials all failed) is BENIGN for the SDK; an incident or a config error is not', () => {
  expect(typedFailure(FailureType.HarborTaskError, 'm').category).toBe(ApplicationFailureCategory.BENIGN);
  expect(typedFailure(FailureType.HarborUnavailable, 'm').category).toBeUndefined();
  expect(typedFailure(FailureType.HarborConfigError, 'm').category).toBeUndefined();
});

test("everything vero throws is a VeroError (docs/architecture.md): no bare Error outside the workflows' update validators", () => {
  const bare: string[] = [];
  for (const dir of ['activities', 'infra', 'harbor', 'client', 'cli', 'sidecar', 'worker', 'compiler', 'model']) {
    for (const f of fs.readdirSync(path.join(ROOT, dir), { recursive: true }) as string[]) {
      if (!f.endsWith('.ts')) continue;
      const src = fs.readFileSync(path.join(ROOT, dir, f), 'utf8');
      for (const [i, line] of src.split('\n').entries()) if (/throw new (Type|Range)?Error\(/.test(line)) bare.push(`${dir}/${f}:${i + 1}`);
    }
  }
  expect(bare).toEqual([]);
});

test('every error class takes its exit code and retryability from the failure table', () => {
  const errors = require('../../model/errors') as Record<string, unknown>;
  const classes = Object.values(errors).filter(
    (v): v is new (...a: never[]) => InstanceType<typeof VeroError> => typeof v === 'function' && v.prototype instanceof VeroError,
  );
  expect(classes.length).toBeGreaterThanOrEqual(10);
  for (const C of classes) {
    const e = new (C as unknown as new (...a: unknown[]) => InstanceType<typeof VeroError>)(['x'], 1, 'm');
    const rule = FAILURES[e.failureType];
    expect({ name: e.name, exitCode: e.exitCode, retryable: e.retryable }).toEqual({
      name: e.name,
      exitCode: rule.exitCode,
      retryable: rule.retryable,
    });
  }
  // The three that once disagreed with the table.
  expect(new TemporalUnreachableError('no server').retryable).toBe(true);
  expect(new WorkflowRunFailedError('build failed').exitCode).toBe(1);
  expect(new DemoFailedError('no gain').exitCode).toBe(1);
});
