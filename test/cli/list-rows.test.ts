/**
 * `vero list` (and `vero view`, which reads the same listing): one row per evaluation however many runs its
 * workflow id has (a --force re-run), with the ref it was started as; and `--candidate HEAD` over uncommitted
 * edits says that the commit, not the edits, is evaluated.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listEvaluations } from '../../client/eval-listing';
import { uncommittedNote } from '../../client/eval-input';
import { VeroCandidate, VeroConfigDigest } from '../../model/evaluation/search-attributes';
import { agentRepo } from '../helpers/fixtures';
import { client, uniqueQueue } from '../helpers/temporal';

test('one row per evaluation, newest run, with its ref', async () => {
  const c = await client();
  const digest = Date.now().toString(16).padStart(16, '0');
  const evalId = `eval-${'e'.repeat(40)}-${digest}`;
  const start = (ref: string) =>
    c.workflow.start('evaluateCandidate', {
      workflowId: evalId,
      taskQueue: uniqueQueue('list-rows'),
      args: [],
      memo: { candidateRef: ref },
      typedSearchAttributes: [
        { key: VeroCandidate, value: 'e'.repeat(40) },
        { key: VeroConfigDigest, value: digest },
      ],
    });
  try {
    await (await start('v1')).terminate('first run over');
    await (await start('v2')).terminate('second run over');
    await start('v3'); // running
    const rows = await listEvaluations(c, { configDigest: digest });
    expect(rows.map((r) => [r.evalId, r.candidateRef, r.workflowStatus])).toEqual([[evalId, 'v3', 'RUNNING']]);
  } finally {
    await c.workflow
      .getHandle(evalId)
      .terminate('test over')
      .catch(() => undefined);
    await c.connection.close();
  }
});

test('--candidate HEAD over uncommitted edits: the committed HEAD is what is evaluated, and that is said', async () => {
  const repo = agentRepo();
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
  expect(await uncommittedNote(repo, 'HEAD', head)).toBeNull();
  const tracked = execFileSync('git', ['ls-files'], { cwd: repo, encoding: 'utf8' }).split('\n')[0]!;
  fs.appendFileSync(path.join(repo, tracked), '\n# an edit not committed\n');
  expect(await uncommittedNote(repo, 'HEAD', head)).toMatch(
    new RegExp(
      `^note: ${repo} has uncommitted changes to 1 file\\(s\\); the committed HEAD \\(${head.slice(0, 12)}\\) is what is evaluated, not your edits`,
    ),
  );
  // Another commit than the one checked out: the edits are not its.
  const other = execFileSync('git', ['rev-parse', 'HEAD~1'], { cwd: repo, encoding: 'utf8' }).trim();
  expect(await uncommittedNote(repo, 'baseline', other)).toBeNull();
});
