#!/usr/bin/env node
/** `vero`: durable evaluation of agent candidates on Harbor tasks. */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../core/errors';
import { registerBuildCommand } from './build-command';
import { registerDevCommands } from './dev-commands';
import { EXIT, registerEvalCommands } from './eval-commands';
import { TemporalUnreachableError } from './eval-client';
import { registerSidecarCommands, SidecarReplyError } from './sidecar-commands';
import { registerTrialsCommand } from './trials-command';

export function buildProgram(): Command {
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
  registerEvalCommands(program);
  registerTrialsCommand(program);
  registerBuildCommand(program);
  registerSidecarCommands(program);
  registerDevCommands(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : EXIT.badInput;
    if (e instanceof ConfigError) {
      process.stderr.write(`error: ${e.message}\n`);
      return EXIT.badInput;
    }
    if (e instanceof SidecarReplyError) {
      process.stderr.write(`error: ${e.message}\n`);
      return 1;
    }
    if (e instanceof TemporalUnreachableError) {
      process.stderr.write(`error: ${e.message}\n`);
      return EXIT.temporalUnreachable;
    }
    process.stderr.write(`error: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
