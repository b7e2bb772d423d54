/**
 * `vero eval --commit <ref>` takes a ref as git does: a branch, HEAD, a commit id, and an ancestry suffix
 * (`HEAD~1`, `main^`). The suffix is resolved in the sidecar's own repo after the fetch (a fetch refspec cannot
 * carry it), so an ancestor is evaluated, and a ref that names no commit is a 400 that says so.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { splitAncestry, transferCommit } from '../../sidecar/commit-transfer';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' }).trim();

let tmp: string;
let agent: string;
let sidecar: string;
let commits: string[];

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vero-commit-transfer-'));
  agent = path.join(tmp, 'agent');
  sidecar = path.join(tmp, 'sidecar');
  fs.mkdirSync(agent);
  fs.mkdirSync(sidecar);
  git(agent, 'init', '-q', '-b', 'main');
  git(sidecar, 'init', '-q');
  commits = [1, 2, 3].map((i) => {
    fs.writeFileSync(path.join(agent, 'agent.py'), `VERSION = ${i}\n`);
    git(agent, 'add', '-A');
    git(agent, 'commit', '-q', '-m', `v${i}`);
    return git(agent, 'rev-parse', 'HEAD');
  });
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('an ancestry suffix is split from the ref git fetches', () => {
  expect(splitAncestry('HEAD~1')).toEqual({ base: 'HEAD', suffix: '~1' });
  expect(splitAncestry('main^2~3')).toEqual({ base: 'main', suffix: '^2~3' });
  expect(splitAncestry('feature/x')).toEqual({ base: 'feature/x', suffix: '' });
});

test.each([
  ['HEAD', 2],
  ['HEAD~1', 1],
  ['main^', 1],
  ['HEAD~2', 0],
  ['main', 2],
])('%s is the commit it names in the agent repo, pinned in the sidecar', async (ref, index) => {
  const sha = await transferCommit(sidecar, agent, ref);
  expect(sha).toBe(commits[index as number]);
  expect(git(sidecar, 'rev-parse', `refs/vero/candidates/${sha}`)).toBe(sha);
});

test('a commit id fetches as itself', async () => {
  expect(await transferCommit(sidecar, agent, commits[0])).toBe(commits[0]);
});

test('an ancestor past the root, or no such ref, is a 400 that names it', async () => {
  await expect(transferCommit(sidecar, agent, 'HEAD~9')).rejects.toMatchObject({
    status: 400,
    message: expect.stringContaining('"HEAD~9" is not a commit'),
  });
  await expect(transferCommit(sidecar, agent, 'nope~1')).rejects.toMatchObject({
    status: 400,
    message: expect.stringContaining('could not be fetched'),
  });
  expect(git(sidecar, 'for-each-ref', 'refs/vero/tmp')).toBe('');
});
