#!/usr/bin/env node
/** `vero`: durable evaluation of agent candidates on Harbor tasks. */
import { Command, CommanderError } from 'commander';
import { causeChain, ExitCode, VeroError } from '../model/errors';

/**
 * Each command's module (one file per command), loaded only when it runs: `vero list` should not pay for the
 * worker's native bridge or the sidecar's HTTP server.
 */
const COMMANDS: [string, () => (program: Command) => void][] = [
  ['start-eval', () => (require('./start-eval-command') as typeof import('./start-eval-command')).registerStartEvalCommand],
  ['status', () => (require('./status-command') as typeof import('./status-command')).registerStatusCommand],
  ['results', () => (require('./results-command') as typeof import('./results-command')).registerResultsCommand],
  ['cancel', () => (require('./cancel-command') as typeof import('./cancel-command')).registerCancelCommand],
  [
    'set-concurrency',
    () => (require('./set-concurrency-command') as typeof import('./set-concurrency-command')).registerSetConcurrencyCommand,
  ],
  ['spend-pool', () => (require('./spend-pool-command') as typeof import('./spend-pool-command')).registerSpendPoolCommand],
  ['list', () => (require('./list-command') as typeof import('./list-command')).registerListCommand],
  ['best', () => (require('./best-command') as typeof import('./best-command')).registerBestCommand],
  ['report', () => (require('./report-command') as typeof import('./report-command')).registerReportCommand],
  ['pause', () => (require('./pause-command') as typeof import('./pause-command')).registerPauseCommand],
  ['resume', () => (require('./resume-command') as typeof import('./resume-command')).registerResumeCommand],
  ['retry', () => (require('./retry-command') as typeof import('./retry-command')).registerRetryCommand],
  ['trials', () => (require('./trials-command') as typeof import('./trials-command')).registerTrialsCommand],
  ['jobs', () => (require('./jobs-command') as typeof import('./jobs-command')).registerJobsCommand],
  ['build', () => (require('./build-command') as typeof import('./build-command')).registerBuildCommand],
  ['run', () => (require('./run-command') as typeof import('./run-command')).registerRunCommand],
  ['compare', () => (require('./compare-command') as typeof import('./compare-command')).registerCompareCommand],
  ['race', () => (require('./race-command') as typeof import('./race-command')).registerRaceCommand],
  ['mcp', () => (require('./mcp-command') as typeof import('./mcp-command')).registerMcpCommand],
  ['query', () => (require('./query-command') as typeof import('./query-command')).registerQueryCommand],
  ['ui', () => (require('./ui-command') as typeof import('./ui-command')).registerUiCommand],
  ['schema', () => (require('./schema-command') as typeof import('./schema-command')).registerSchemaCommand],
  ['clean', () => (require('./clean-command') as typeof import('./clean-command')).registerCleanCommand],
  ['view', () => (require('./view-command') as typeof import('./view-command')).registerViewCommand],
  ['serve', () => (require('./serve-command') as typeof import('./serve-command')).registerServeCommand],
  ['eval', () => (require('./eval-command') as typeof import('./eval-command')).registerEvalCommand],
  ['budget', () => (require('./budget-command') as typeof import('./budget-command')).registerBudgetCommand],
  ['submit', () => (require('./submit-command') as typeof import('./submit-command')).registerSubmitCommand],
  ['finalize', () => (require('./finalize-command') as typeof import('./finalize-command')).registerFinalizeCommand],
  ['snapshot', () => (require('./snapshot-command') as typeof import('./snapshot-command')).registerSnapshotCommand],
  ['evals', () => (require('./evals-command') as typeof import('./evals-command')).registerEvalsCommand],
  ['worker', () => (require('./worker-command') as typeof import('./worker-command')).registerWorkerCommand],
  ['dev', () => (require('./dev-command') as typeof import('./dev-command')).registerDevCommand],
  ['demo', () => (require('./demo-command') as typeof import('./demo-command')).registerDemoCommand],
  [
    'completion',
    () => (program: Command) =>
      (require('./completion-command') as typeof import('./completion-command')).registerCompletionCommand(program, () => buildProgram()),
  ],
];

export function buildProgram(argv: string[] = []): Command {
  const command = argv.find((a) => !a.startsWith('-'));
  const program = new Command('vero').description('Evaluate agent candidates (git commits) on Harbor tasks as durable Temporal workflows.');
  // vero's `evals run|submit --version <commit>` names a candidate: the program's --version would take it.
  if (command !== 'evals') program.version(require('../../package.json').version as string);
  program
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      `
Exit codes: 0 ok; 1 the evaluation failed (error rate over the threshold, or the workflow failed);
2 bad input (config, flags, candidate); 3 the Temporal server cannot be reached; 4 the evaluation ended
budget_exhausted (a spend cap kept tasks from running: its results are partial).

Quick start: vero dev (in one terminal), then vero start-eval -c examples/vero.yaml --candidate improved --wait`,
    );
  const one = COMMANDS.find(([name]) => name === command);
  for (const [, load] of one ? [one] : COMMANDS) load()(program);
  return program;
}

/** The SDK's errors that mean bad input or no server (required here only: loading the SDK costs startup time). */
function sdkError(e: unknown): { exitCode: ExitCode; hint: string } | null {
  const { WorkflowNotFoundError } = require('@temporalio/common') as typeof import('@temporalio/common');
  if (e instanceof WorkflowNotFoundError)
    return { exitCode: ExitCode.badInput, hint: 'no such evaluation on this server and namespace; `vero list --all` shows the ids' };
  // A workflow a command waited on ended without a result (cancelled, terminated, failed): its reason, one line.
  const clientModule = require.cache[require.resolve('@temporalio/client')]?.exports as typeof import('@temporalio/client') | undefined;
  if (clientModule && e instanceof clientModule.WorkflowFailedError)
    return {
      exitCode: ExitCode.evaluationFailed,
      hint: `the workflow ended without a result: ${causeChain(e.cause) || 'no reason given'}`,
    };
  // A TransportError comes from a worker's connection: when the worker package is not loaded, it is not one.
  const workerModule = require.cache[require.resolve('@temporalio/worker')]?.exports as typeof import('@temporalio/worker') | undefined;
  if (workerModule && e instanceof workerModule.TransportError)
    return {
      exitCode: ExitCode.temporalUnreachable,
      hint: 'is the Temporal server running? start one with `vero dev`, or set --address / VERO_TEMPORAL_ADDRESS',
    };
  return null;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram(argv).parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    return reportError(e);
  }
}

/** What a command that failed with `e` prints (one line, or one per bad-input problem) and exits with. */
export function reportError(e: unknown): number {
  if (e instanceof CommanderError) return e.exitCode === 0 ? ExitCode.ok : ExitCode.badInput;
  if (e instanceof VeroError) {
    // Bad input: every problem, one line each (`file: path: problem`); anything else: its one-line reason.
    const lines = e.exitCode === ExitCode.badInput ? e.message.split('\n').filter(Boolean) : [e.message.split('\n')[0]];
    process.stderr.write(lines.map((l) => `error: ${l}\n`).join(''));
    return e.exitCode;
  }
  const sdk = sdkError(e);
  if (sdk) {
    process.stderr.write(`error: ${(e as Error).message.split('\n')[0]} (${sdk.hint})\n`);
    return sdk.exitCode;
  }
  // A system error (a file, a port): its one-line reason; VERO_DEBUG=1 shows where it came from.
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && !process.env.VERO_DEBUG) {
    process.stderr.write(`error: ${(e as Error).message.split('\n')[0]}\n`);
    return 1;
  }
  process.stderr.write(`error: ${(e as Error).stack ?? String(e)}\n`);
  return 1;
}

if (require.main === module) {
  // `vero … | head`: a reader that stops reading is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
