/**
 * The lower layers import nothing above them (docs/architecture.md "Module map"): the placement rules of
 * eslint.config.mjs, run through the ESLint CLI with the project's own config (an ES module jest cannot load) on
 * code placed in each layer.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

const ESLINT = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');

/** The messages of no-restricted-imports for `import` lines written in `file` (an existing product file). */
async function importErrors(file: string, from: string[]): Promise<string[]> {
  const code = from.map((m, i) => `import * as m${i} from '${m}';\nexport const u${i} = m${i};\n`).join('');
  const lint = spawnSync(process.execPath, [ESLINT, '--stdin', '--stdin-filename', file, '--format', 'json'], {
    cwd: ROOT,
    input: code,
    encoding: 'utf8',
  });
  const [result] = JSON.parse(lint.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const ABOVE_HARBOR = ['client', 'cli', 'workflows', 'activities', 'sidecar', 'compiler', 'worker'];

test('harbor/ imports nothing above it; the model and infra/ are below it', async () => {
  const above = await importErrors(
    'harbor/launch.ts',
    ABOVE_HARBOR.map((d) => `../${d}/x`),
  );
  expect(above).toHaveLength(ABOVE_HARBOR.length);
  expect(above[0]).toMatch(/harbor\/ imports nothing above it/);
  expect(await importErrors('harbor/launch.ts', ['../model/errors', '../infra/atomic-file', './job-name'])).toEqual([]);
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
