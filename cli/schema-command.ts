/** `vero schema [COMMAND]`: the JSON Schema of a command's `--json` output (the files in schemas/, from the code). */
import { Command } from 'commander';
import { ConfigError } from '../model/errors';
import type { CliJsonCommand } from '../model/cli-json';
import { jsonSchemaOf, SCHEMA_COMMANDS } from './json-schemas';

export function registerSchemaCommand(program: Command): void {
  program
    .command('schema')
    .description(
      "the JSON Schema (draft 2020-12) of a command's --json output; without COMMAND, the commands that have one (start-eval--print-config is start-eval --print-config). Also shipped as schemas/<command>.schema.json",
    )
    .argument('[command]', 'a command with --json')
    .action((command?: string) => {
      if (command === undefined) return void process.stdout.write(`${SCHEMA_COMMANDS.join('\n')}\n`);
      if (!(SCHEMA_COMMANDS as string[]).includes(command))
        throw new ConfigError(`[command]: expected one of ${SCHEMA_COMMANDS.join(', ')}; got "${command}"`);
      process.stdout.write(`${JSON.stringify(jsonSchemaOf(command as CliJsonCommand), null, 2)}\n`);
    });
}
