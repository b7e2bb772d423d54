/**
 * Placement rules of eslint.config.mjs (docs/architecture.md "Module map"), run through the ESLint CLI with the
 * project's own config (an ES module jest cannot load) on code placed in product files: the lower layers import
 * nothing above them; Harbor's job and trial dirs are spelled only in model/harbor/paths.ts; harbor is started
 * only by harbor/launch.ts; harbor/ imports nothing of Temporal's.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

const ESLINT = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');

/** The lines (from 1) of `lines`, written in each of `files` (existing product files), that `rule` refuses. */
function refusedLines(files: string[], lines: string[], rule: string): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const file of files) {
    const lint = spawnSync(process.execPath, [ESLINT, '--stdin', '--stdin-filename', file, '--format', 'json'], {
      cwd: ROOT,
      input: lines.join('\n') + '\n',
      encoding: 'utf8',
    });
    const [result] = JSON.parse(lint.stdout) as { messages: { ruleId: string | null; line: number }[] }[];
    out[file] = [...new Set(result!.messages.filter((m) => m.ruleId === rule).map((m) => m.line))];
  }
  return out;
}

const importOf = (from: string, i: number) => `import * as m${i} from '${from}'; export const u${i} = m${i};`;
const ABOVE_HARBOR = ['client', 'cli', 'workflows', 'activities', 'sidecar', 'compiler', 'worker'];

test('harbor/ imports nothing above it, infra/ nothing of harbor/ nor above; both may import the model and infra/', () => {
  const above = ['harbor', ...ABOVE_HARBOR].map((d) => `../${d}/x`);
  const below = ['../model/errors', '../infra/atomic-file', '../model/harbor/argv'];
  const lines = [...above, ...below].map(importOf);
  const refused = refusedLines(['harbor/launch.ts', 'infra/atomic-file.ts'], lines, 'no-restricted-imports');
  // Line 1 is ../harbor/x: harbor/ may import itself that way; infra/ may not.
  expect(refused['harbor/launch.ts']).toEqual(ABOVE_HARBOR.map((_, i) => i + 2));
  expect(refused['infra/atomic-file.ts']).toEqual(above.map((_, i) => i + 1));
}, 60_000);

test("Harbor's job and trial dirs are spelled only in model/harbor/paths.ts", () => {
  const args = '(trialDir: string, jobDir: string, d: string, rel: string, name: string)';
  const spelled = [
    "path.join(trialDir, 'verifier', 'reward.json')",
    "path.join(jobDir, d, 'result.json')",
    "path.join(trialDir, 'agent')",
    '`${rel}/agent/trajectory.json`',
    '`${rel}/verifier/${name}`',
    "'trial.log'",
  ];
  const lines = [
    "import * as path from 'node:path';",
    ...spelled.map((e, i) => `export const p${i} = ${args} => ${e};`),
    // Prose that names them is not a path.
    "export const help = 'the trial dir holds result.json, trial.log and agent/ files';",
  ];
  const refused = refusedLines(['client/view-data.ts', 'model/harbor/paths.ts'], lines, 'no-restricted-syntax');
  expect(refused['client/view-data.ts']).toEqual(spelled.map((_, i) => i + 2));
  expect(refused['model/harbor/paths.ts']).toEqual([]);
}, 60_000);

test('harbor is started only by harbor/launch.ts: every process starter is imported only where eslint.config.mjs allows', () => {
  const lines = [
    "import { forkHarbor } from '../harbor/forkserver'; export const a = forkHarbor;",
    "import { runInForeground } from '../infra/foreground'; export const b = runInForeground;",
    "import { runInGroup } from '../infra/process-group'; export const c = runInGroup;",
    "import { startHelperProcess } from '../infra/foreground'; export const d = startHelperProcess;",
    "import * as pg from '../infra/process-group'; export const e = pg;",
    "export { runInGroup as run } from '../infra/process-group';",
    // Not a starter: the fork servers' shutdown.
    "import { closeForkServers } from '../harbor/forkserver'; export const f = closeForkServers;",
    // Nor reached around: a re-export of all, a require(), an import() of a starter's module.
    "export * from '../infra/process-group';",
    "export const g = (require('../infra/process-group') as { runInGroup: unknown }).runInGroup;",
    "export const h = import('../harbor/forkserver');",
  ];
  const refused = refusedLines(
    ['cli/run-command.ts', 'harbor/compiled-task-run.ts', 'harbor/launch.ts', 'activities/mode-a.ts', 'sidecar/wandb-reporter.ts'],
    lines,
    'no-restricted-syntax',
  );
  expect(refused['cli/run-command.ts']).toEqual([1, 2, 3, 4, 5, 6, 8, 9, 10]);
  expect(refused['harbor/compiled-task-run.ts']).toEqual([1, 2, 3, 4, 5, 6, 8, 9, 10]);
  expect(refused['harbor/launch.ts']).toEqual([4, 5, 8, 9, 10]);
  // Mode A runs the user's own commands in a group; the sidecar its W&B logger.
  expect(refused['activities/mode-a.ts']).toEqual([1, 2, 4, 5, 8, 9, 10]);
  expect(refused['sidecar/wandb-reporter.ts']).toEqual([1, 2, 3, 5, 6, 8, 9, 10]);
}, 60_000);

test("harbor/ imports nothing of Temporal's (the activity hands it its hooks)", () => {
  const lines = ['@temporalio/activity', '@temporalio/common', '@temporalio/client', '../model/errors'].map(importOf);
  const refused = refusedLines(['harbor/task-attempt.ts', 'activities/run-task.ts'], lines, 'no-restricted-imports');
  expect(refused['harbor/task-attempt.ts']).toEqual([1, 2, 3]);
  expect(refused['activities/run-task.ts']).toEqual([]);
}, 60_000);
