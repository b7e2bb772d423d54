/**
 * The lower layers import nothing above them (docs/architecture.md "Module map"): the placement rules of
 * eslint.config.mjs, run through ESLint with the project's own config on code placed in each layer.
 */
import * as path from 'node:path';
import { ESLint } from 'eslint';
import { ROOT } from '../helpers/fixtures';

const eslint = new ESLint({ cwd: ROOT });

/** The messages of no-restricted-imports for `import` lines written in `file` (an existing product file). */
async function importErrors(file: string, from: string[]): Promise<string[]> {
  const code = from.map((m, i) => `import * as m${i} from '${m}';\nexport const u${i} = m${i};\n`).join('');
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const ABOVE_HARBOR = ['client', 'cli', 'workflows', 'activities', 'sidecar', 'compiler', 'worker'];

test('harbor/ imports nothing above it; the model and infra/ are below it', async () => {
  const above = await importErrors(
    'model/harbor/argv.ts',
    ABOVE_HARBOR.map((d) => `../${d}/x`),
  );
  expect(above).toHaveLength(ABOVE_HARBOR.length);
  expect(above[0]).toMatch(/harbor\/ imports nothing above it/);
  expect(await importErrors('model/harbor/argv.ts', ['../model/errors', '../infra/atomic-file', './job-name'])).toEqual([]);
}, 60_000);

test('infra/ imports nothing from harbor/ nor above it', async () => {
  const above = await importErrors(
    'infra/atomic-file.ts',
    ['harbor', ...ABOVE_HARBOR].map((d) => `../${d}/x`),
  );
  expect(above).toHaveLength(ABOVE_HARBOR.length + 1);
  expect(above[0]).toMatch(/infra\/ imports nothing above it/);
  expect(await importErrors('infra/atomic-file.ts', ['../model/errors', './bounded-read'])).toEqual([]);
}, 60_000);
