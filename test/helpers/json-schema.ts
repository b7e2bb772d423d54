/**
 * Validates a command's `--json` output against the JSON Schema file the package ships for it (schemas/), with
 * Ajv (draft 2020-12): what a script reading the output relies on, checked on real output.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import type { CliJsonCommand } from '../../model/cli-json';
import { ROOT } from './fixtures';

const ajv = new Ajv2020({ allErrors: true, strict: false });
const compiled = new Map<string, ReturnType<typeof ajv.compile>>();

/** The output's problems against `schemas/<command>.schema.json` (empty when it conforms). */
export function schemaProblems(command: CliJsonCommand, output: unknown): string[] {
  let validate = compiled.get(command);
  if (!validate) {
    validate = ajv.compile(JSON.parse(fs.readFileSync(path.join(ROOT, 'schemas', `${command}.schema.json`), 'utf8')) as object);
    compiled.set(command, validate);
  }
  return validate(output)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** Parses stdout as JSON and asserts it conforms to the command's schema; returns it. */
export function conforming<T = unknown>(command: CliJsonCommand, stdout: string): T {
  const value = JSON.parse(stdout) as T;
  expect({ command, problems: schemaProblems(command, value) }).toEqual({ command, problems: [] });
  return value;
}
