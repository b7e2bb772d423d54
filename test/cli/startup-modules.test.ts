/**
 * What a command loads before it runs: the agent-side commands an optimizer calls many times (`vero eval`,
 * `eval wait`, `budget`, `submit`, vero's `evals …`) are HTTP clients of the sidecar, and must not pay for the
 * sidecar itself (its Temporal worker, HTTP server and gateway) nor for a Temporal client. Read from the built CLI, as `bin/vero` runs it.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from '../helpers/fixtures';

/** The files loaded once `vero <args>`'s commands are registered (what runs before its action). */
function loadedBy(args: string[]): string[] {
  const script = `require(${JSON.stringify(path.join(ROOT, 'dist', 'cli', 'main.js'))}).buildProgram(${JSON.stringify(args)});
process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return (JSON.parse(r.stdout) as string[]).map((f) => path.relative(ROOT, f).split(path.sep).join('/'));
}

// The sidecar, a Temporal worker, the HTTP server, and the Temporal client with its gRPC stack: an HTTP client of
// the sidecar needs none of them.
const HEAVY = [
  /^dist\/sidecar\/serve\.js$/,
  /^node_modules\/@temporalio\/(worker|client)\//,
  /^node_modules\/@grpc\//,
  /^node_modules\/fastify\//,
];

// `eval` stands for the agent-side commands (eval, budget, submit: one module each); `evals` is vero's.
test.each([['eval'], ['evals']])('vero %s loads neither the sidecar, a worker nor a Temporal client', (command) => {
  const loaded = loadedBy([command]);
  expect(loaded).toContain('dist/cli/sidecar-client.js'); // the command itself was registered
  expect(loaded.filter((f) => HEAVY.some((h) => h.test(f)))).toEqual([]);
});

test('one file per command: what `vero <command>` loads registers that command alone', () => {
  const { buildProgram } = require(path.join(ROOT, 'dist', 'cli', 'main.js')) as typeof import('../../cli/main');
  const names = buildProgram().commands.map((c) => c.name());
  expect(names.length).toBeGreaterThan(30);
  const alone = names.map((name) => [name, buildProgram([name]).commands.map((c) => c.name())]);
  expect(alone).toEqual(names.map((name) => [name, [name]]));
});
