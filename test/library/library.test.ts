/**
 * vero-harbor imported by its package name, as another project would: the example (examples/client-library)
 * run with node against the dev server, and a TypeScript consumer type-checked against the shipped declarations.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { evalFixture, ROOT, tempDir } from '../helpers/fixtures';
import { address, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(300_000);

function node(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the package name resolves to the client, with its declarations (package.json main, types, exports)', () => {
  const resolved = execFileSync(process.execPath, ['-p', "require.resolve('vero-harbor')"], { cwd: ROOT, encoding: 'utf8' }).trim();
  expect(resolved).toBe(path.join(ROOT, 'dist', 'client', 'index.js'));
  expect(fs.existsSync(path.join(ROOT, 'dist', 'client', 'index.d.ts'))).toBe(true);
});

test('the example evaluates a candidate and queries it through `import … from "vero-harbor"`', async () => {
  const q = uniqueQueue('library');
  const f = evalFixture({ taskQueue: q, address: address() });
  const r = await withWorker(q, () => node([path.join('examples', 'client-library', 'evaluate.mjs'), f.configFile, 'improved']));
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^started eval-[0-9a-f]{40}-[0-9a-f]+: 6 task\(s\) of [0-9a-f]{12}$/m);
  expect(r.stdout).toMatch(/^task hello-world: scored 1$/m);
  expect(r.stdout).toContain('score 0.750 (6 scored, 0 error(s))');
  expect(r.stdout).toContain('query: [["scored",6]]');
  // The result the example read is the one on disk.
  const id = /^started (eval-\S+):/m.exec(r.stdout)![1]!;
  expect(JSON.parse(fs.readFileSync(path.join(f.home, 'results', `${id}.json`), 'utf8')).score).toBeCloseTo(0.75, 6);
});

test('a TypeScript project type-checks against the package (its types say what a result holds)', () => {
  const dir = tempDir('vero-consumer-');
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(ROOT, path.join(dir, 'node_modules', 'vero-harbor'));
  fs.writeFileSync(
    path.join(dir, 'consumer.ts'),
    `import { connect, listEvaluations, queryEvaluations, type CandidateResult } from 'vero-harbor';
export async function best(): Promise<number> {
  const client = await connect('127.0.0.1:7233', 'default');
  const rows = await listEvaluations(client, { limit: 5 });
  const q = await queryEvaluations('SELECT max(score) FROM evaluations', { client });
  const r: Pick<CandidateResult, 'score' | 'nErrors'> = { score: Number(q.rows[0]?.[0] ?? 0), nErrors: rows.length };
  // @ts-expect-error a result's score is a number
  const wrong: string = r.score;
  return r.score + wrong.length;
}
`,
  );
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', '--types', 'node'];
  execFileSync(process.execPath, [tsc, ...args, '--typeRoots', path.join(ROOT, 'node_modules', '@types'), 'consumer.ts'], {
    cwd: dir,
    encoding: 'utf8',
  });
});
