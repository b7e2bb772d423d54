#!/usr/bin/env node
/** `vero`: durable evaluation of agent candidates on Harbor tasks. */
import { Command, CommanderError } from 'commander';

const EXIT = { ok: 0, evaluationFailed: 1, badInput: 2, temporalUnreachable: 3 } as const;

/**
 * Command groups, loaded only when one of their commands runs: `vero list` should not pay for the worker's
 * native bridge or the sidecar's HTTP server.
 */
const GROUPS: [string[], () => (program: Command) => void][] = [
  [
    ['start-eval', 'status', 'results', 'cancel', 'list', 'best'],
    () => (require('./eval-commands') as typeof import('./eval-commands')).registerEvalCommands,
  ],
  [['trials'], () => (require('./trials-command') as typeof import('./trials-command')).registerTrialsCommand],
  [['build'], () => (require('./build-command') as typeof import('./build-command')).registerBuildCommand],
  [
    ['serve', 'eval', 'budget', 'submit', 'finalize'],
    () => (require('./sidecar-commands') as typeof import('./sidecar-commands')).registerSidecarCommands,
  ],
  [['worker', 'dev', 'demo'], () => (require('./dev-commands') as typeof import('./dev-commands')).registerDevCommands],
];

export function buildProgram(argv: string[] = []): Command {
  const program = new Command('vero')
    .description('Evaluate agent candidates (git commits) on Harbor tasks as durable Temporal workflows.')
    .version(require('../../package.json').version as string)
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      `
Exit codes: 0 ok; 1 the evaluation failed (error rate over the threshold, or the workflow failed);
2 bad input (config, flags, candidate); 3 the Temporal server cannot be reached.

Quick start: vero dev (in one terminal), then vero start-eval -c examples/vero.yaml --candidate improved --wait`,
    );
  const command = argv.find((a) => !a.startsWith('-'));
  const group = GROUPS.find(([names]) => command !== undefined && names.includes(command));
  for (const [, load] of group ? [group] : GROUPS) load()(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram(argv).parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : EXIT.badInput;
    // Matched by name: the classes live in lazily loaded modules.
    const { name, message } = e as Error;
    const exit = {
      ConfigError: EXIT.badInput,
      SidecarReplyError: EXIT.evaluationFailed,
      TemporalUnreachableError: EXIT.temporalUnreachable,
      // The SDK's: an unknown evaluation id; a worker that cannot connect.
      WorkflowNotFoundError: EXIT.badInput,
      TransportError: EXIT.temporalUnreachable,
    }[name];
    if (exit !== undefined) {
      const hint =
        name === 'WorkflowNotFoundError'
          ? ' (no such evaluation on this server and namespace; `vero list --all` shows the ids)'
          : name === 'TransportError'
            ? ' (is the Temporal server running? start one with `vero dev`, or set --address / VERO_TEMPORAL_ADDRESS)'
            : '';
      process.stderr.write(`error: ${message.split('\n')[0]}${hint}\n`);
      return exit;
    }
    process.stderr.write(`error: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
