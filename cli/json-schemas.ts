/**
 * JSON Schemas (draft 2020-12) of every `--json` output, generated from the zod schemas in model/cli-json.ts.
 * Shipped as `schemas/<command>.schema.json`; `vero schema COMMAND` prints one. Regenerate the files with
 * `npm run schemas` (a test fails while they differ from the code).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { CLI_JSON_SCHEMAS, type CliJsonCommand } from '../model/cli-json';
import { writeJsonDurable } from '../infra/atomic-file';

export const SCHEMA_COMMANDS = Object.keys(CLI_JSON_SCHEMAS) as CliJsonCommand[];

export function jsonSchemaOf(command: CliJsonCommand): Record<string, unknown> {
  const schema = z.toJSONSchema(CLI_JSON_SCHEMAS[command], { target: 'draft-2020-12', io: 'output', unrepresentable: 'any' });
  const what = command.replace('--', ' --');
  return { $id: `vero-harbor/schemas/${command}.schema.json`, title: `vero ${what} --json`, ...schema };
}

const schemaFile = (dir: string, command: CliJsonCommand): string => path.join(dir, `${command}.schema.json`);

function writeSchemas(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const c of SCHEMA_COMMANDS) writeJsonDurable(schemaFile(dir, c), jsonSchemaOf(c), { fsync: false });
}

if (require.main === module) {
  const dir = process.argv[2] ?? path.join(__dirname, '..', '..', 'schemas');
  writeSchemas(dir);
  process.stdout.write(`wrote ${SCHEMA_COMMANDS.length} schemas to ${dir}\n`);
}
