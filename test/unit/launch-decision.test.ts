/** Every row of the launch decision table (harbor/launch-decision.ts), in each caller's column. */
import { decideLaunch, type LaunchFacts, type LaunchPurpose } from '../../harbor/launch-decision';
import { launcherNotFound } from '../../harbor/launch-failure';
import { ensuredHarborFrom } from '../../infra/foreground';

const ended = (over: Partial<LaunchFacts>): LaunchFacts => ({
  detached: false,
  cancelled: false,
  notFound: false,
  timedOut: false,
  exitCode: 1,
  signal: null,
  jobStarted: false,
  output: '',
  ...over,
});

test.each<[string, Partial<LaunchFacts>, unknown]>([
  [
    'left running for the next attempt (wins over everything)',
    { detached: true, cancelled: true, timedOut: true },
    { kind: 'leave-for-next-attempt' },
  ],
  ['cancelled', { cancelled: true, exitCode: null }, { kind: 'cancelled' }],
  ['the launcher does not exist', { notFound: true, exitCode: null }, { kind: 'launcher-not-found' }],
  ['stopped at the task timeout: collect what it made', { timedOut: true, exitCode: null }, { kind: 'collect', why: 'task timeout' }],
  ['exit 2: a usage error, even if the job started', { exitCode: 2, jobStarted: true }, { kind: 'usage-error' }],
  ['exit 0', { exitCode: 0 }, { kind: 'collect', why: 'exit 0' }],
  [
    'a non-zero exit after the job started: collect its trials',
    { exitCode: 1, jobStarted: true, output: 'RuntimeError: trial 3 crashed' },
    { kind: 'collect', why: 'job ran' },
  ],
  [
    'refused to resume the job dir: a fresh job',
    {
      exitCode: 1,
      jobStarted: true,
      output: 'FileExistsError: Job directory /j/t already exists and cannot be resumed with a different config.',
    },
    { kind: 'fresh-job', reason: 'Job directory /j/t already exists and cannot be resumed with a different config.' },
  ],
  [
    'Docker down: wait for it',
    { output: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?' },
    {
      kind: 'wait',
      for: 'docker',
      reason: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?',
    },
  ],
  [
    'disk full: wait for room',
    { output: "OSError: [Errno 28] No space left on device: '/h/lock.json'" },
    { kind: 'wait', for: 'disk', reason: "OSError: [Errno 28] No space left on device: '/h/lock.json'" },
  ],
  [
    'anything else before the job started: a config error',
    { output: 'ValueError: No tasks matched the filter(s) ["x"].' },
    { kind: 'config-error', reason: 'ValueError: No tasks matched the filter(s) ["x"].' },
  ],
  [
    'a silent failure is a config error with no reason (the log tail is shown)',
    { exitCode: 1, output: '' },
    { kind: 'config-error', reason: '' },
  ],
])('%s', (_name, facts, decision) => {
  expect(decideLaunch(ended(facts))).toEqual(decision);
});

/** The same table for the preflight's `--dry-run`: it creates no job, so nothing is collected or waited for. */
test.each<[string, Partial<LaunchFacts>, unknown]>([
  ['cancelled', { cancelled: true, exitCode: null }, { kind: 'cancelled' }],
  ['the launcher does not exist', { notFound: true, exitCode: null }, { kind: 'launcher-not-found' }],
  [
    "exit 0: Harbor's verdict",
    { exitCode: 0, output: 'loading\n  Dry run OK — 1 trial(s); nothing was run.  \n' },
    { kind: 'dry-run-ok', verdict: 'Dry run OK — 1 trial(s); nothing was run.' },
  ],
  ['exit 0 without a verdict line', { exitCode: 0 }, { kind: 'dry-run-ok', verdict: 'dry run OK' }],
  [
    'stopped at its limit: unavailable (retried)',
    { timedOut: true, exitCode: null },
    { kind: 'unavailable', reason: 'harbor --dry-run did not finish within 5 minutes' },
  ],
  ['exit 2: a usage error', { exitCode: 2 }, { kind: 'usage-error' }],
  [
    'Docker down: unavailable (retried), not a wait',
    { output: 'Docker daemon is not running' },
    { kind: 'unavailable', reason: 'harbor preflight: Docker daemon is not running' },
  ],
  [
    'a job dir from an earlier run is not collected',
    { exitCode: 1, jobStarted: true, output: 'Dry run failed: agent kwarg "x" is not accepted by\n   the agent' },
    { kind: 'config-error', reason: 'Dry run failed: agent kwarg "x" is not accepted by the agent' },
  ],
  [
    'no verdict: the last error line',
    { output: 'ValueError: No tasks matched the filter(s) ["x"].' },
    { kind: 'config-error', reason: 'ValueError: No tasks matched the filter(s) ["x"].' },
  ],
])('dry run: %s', (_name, facts, decision) => {
  expect(decideLaunch(ended(facts), 'dry-run')).toEqual(decision);
});

/** Harbor 0.26's words when an `--ek` key is not one of the environment's options (printed, exit 1, no job dir). */
const UNKNOWN_EK_026 = [
  'No agent auth resolution',
  "Invalid kwargs for environment 'docker':",
  "  Unknown option 'bogus_key'.",
  'See harbor environment schema docker for available options.',
  'Skipped: agents[0]: kwargs validation; agent has no options schema.',
].join('\n');
const UNKNOWN_EK_REASON =
  "Invalid kwargs for environment 'docker': Unknown option 'bogus_key'. See harbor environment schema docker for available options.";

test.each<[string, 'task' | 'dry-run']>([
  ['a task', 'task'],
  ['the dry run', 'dry-run'],
])("Harbor 0.26 refusing an unknown --ek key: a config error in Harbor's own words, for %s", (_name, purpose) => {
  expect(decideLaunch(ended({ exitCode: 1, output: UNKNOWN_EK_026 }), purpose)).toEqual({
    kind: 'config-error',
    reason: UNKNOWN_EK_REASON,
  });
});

/**
 * The column of a CLI process's harbor (a compiled task's run, `vero run`): harbor's exit code is the process's,
 * whatever harbor printed; only a launcher that is not there (exit 2, from the failure table) and an interrupted
 * run end it otherwise.
 */
test.each<[string, Partial<LaunchFacts>, unknown]>([
  ['interrupted (Ctrl-C)', { cancelled: true, exitCode: null, signal: 'SIGTERM' }, { kind: 'cancelled' }],
  ['the launcher does not exist', { notFound: true, exitCode: null }, { kind: 'launcher-not-found' }],
  ['exit 0', { exitCode: 0 }, { kind: 'exit', code: 0 }],
  ["exit 2: harbor's usage error is the process's", { exitCode: 2 }, { kind: 'exit', code: 2 }],
  ['Docker down: not waited for', { exitCode: 1, output: 'Docker daemon is not running' }, { kind: 'exit', code: 1 }],
  [
    'a refused resume: no fresh job',
    { exitCode: 1, jobStarted: true, output: 'cannot be resumed with a different config' },
    { kind: 'exit', code: 1 },
  ],
  [
    'ended by a signal (or stopped at its deadline): 128',
    { timedOut: true, exitCode: null, signal: 'SIGTERM' },
    { kind: 'exit', code: 128 },
  ],
  ['no exit code and no signal: 1', { exitCode: null }, { kind: 'exit', code: 1 }],
])('a CLI run: %s', (_name, facts, decision) => {
  expect(decideLaunch(ended(facts), 'compiled-run')).toEqual(decision);
  expect(decideLaunch(ended(facts), 'vero-run')).toEqual(decision);
});

/** A launcher that is not there, in each caller's column: the message names where that caller's harbor came from. */
test.each<[string, LaunchPurpose, string | undefined, string]>([
  ['a task', 'task', undefined, 'harbor.command'],
  ['the dry run', 'dry-run', undefined, 'harbor.command'],
  ['vero run', 'vero-run', undefined, '--harbor'],
  [
    "vero demo --optimize's compiled run (ensureHarbor's)",
    'compiled-run',
    ensuredHarborFrom('0.25.0'),
    'scripts/ensure-harbor 0.25.0: $HARBOR_BIN, a harbor 0.25.0 on PATH, or its cached venv',
  ],
  ['a compiled run that does not say', 'compiled-run', undefined, "the compiled task's run's harbor"],
])('the launcher does not exist: %s', (_name, purpose, launcherFrom, from) => {
  const e = launcherNotFound({ purpose, launcher: '/x/harbor', launcherFrom, exitCode: null, signal: null, logTail: () => '' });
  expect(e.message).toBe(`harbor launcher not found: "/x/harbor" (${from}); is Harbor installed and on PATH?`);
});
