/**
 * The npm package as a user installs it: `npm pack`, a global install into a fresh prefix, and `vero demo` run
 * from a directory that is not the clone. The tarball carries what the demo needs (examples, the stand-in)
 * and no tests or benches; the demo writes nothing into the installed package.
 */
import { conforming } from '../helpers/json-schema';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT, tempDir } from '../helpers/fixtures';

jest.setTimeout(600_000);

/** Every file under a dir, relative to it (for "nothing was written here"). */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

test('npm pack + a global install: vero demo works outside the clone and writes nothing into the package', () => {
  const out = tempDir('vero-pack-');
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: ROOT, encoding: 'utf8' })) as {
    filename: string;
    files: { path: string }[];
  }[];
  const files = packed[0]!.files.map((f) => f.path);
  expect(files).toEqual(
    expect.arrayContaining([
      'bin/vero',
      'LICENSE',
      'examples/vero.yaml',
      'examples/make-agent-repo.sh',
      'harbor-standin/harbor',
      'scripts/ensure-temporal',
    ]),
  );
  expect(files.some((f) => f.startsWith('examples/datasets/mini-bench/'))).toBe(true);
  expect(files.filter((f) => /(^|\/)(test|bench)\//.test(f) || f.endsWith('.test.js') || f.startsWith('examples/agent-repo'))).toEqual([]);

  const prefix = tempDir('vero-prefix-');
  const install = spawnSync(
    'npm',
    ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', path.join(out, packed[0]!.filename)],
    {
      encoding: 'utf8',
    },
  );
  expect({ code: install.status, err: install.status === 0 ? '' : install.stderr.slice(-2000) }).toEqual({ code: 0, err: '' });
  const pkgDir = path.join(prefix, 'lib', 'node_modules', 'vero-harbor');
  const before = filesUnder(pkgDir);

  // From a directory that is not the clone, with a home of its own.
  const cwd = tempDir('vero-elsewhere-');
  const home = path.join(cwd, 'demo-home');
  const demo = spawnSync(path.join(prefix, 'bin', 'vero'), ['demo', '--home', home, '--json'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${path.join(prefix, 'bin')}${path.delimiter}${process.env.PATH}` },
    timeout: 300_000,
  });
  expect({ code: demo.status, err: demo.status === 0 ? '' : demo.stderr.slice(-3000) }).toEqual({ code: 0, err: '' });
  const r = conforming<{ results: { candidateRef: string; score: number }[]; best: string }>('demo', demo.stdout);
  expect(r.results.map((x) => [x.candidateRef, Number(x.score.toFixed(3))])).toEqual([
    ['baseline', 0.333],
    ['improved', 0.75],
  ]);
  expect(filesUnder(pkgDir)).toEqual(before);
  expect(fs.existsSync(path.join(home, 'agent-repo', '.git'))).toBe(true);
});
