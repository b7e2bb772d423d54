/**
 * `vero clean --yes` racing `start-eval --force`: between the plan and the removal the evaluation runs again
 * (its workflow id reused, a new run dir, its candidate's worktree in use). Every item is checked again right
 * before it goes, so the running evaluation keeps its files; what cannot be removed is left and said, never a
 * stack trace. A real Temporal dev server; no worker is needed (a started workflow is RUNNING until it ends).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyClean, planClean } from '../../client/home-retention';
import { VeroCandidate } from '../../model/evaluation/search-attributes';
import { tempDir } from '../helpers/fixtures';
import { client, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(60_000);

test('an evaluation started again after the plan keeps its run dir and worktree; the rest goes', async () => {
  const c = await client();
  const home = path.join(tempDir('vero-clean-race-'), 'home');
  const commit = 'c'.repeat(39) + String(Date.now() % 10);
  const evalId = `eval-${commit}-${Date.now().toString(16)}`;
  const other = 'd'.repeat(40);
  const old = (Date.now() - 60 * 86_400_000) / 1000;
  const plant = (rel: string, when = old) => {
    const p = path.join(home, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, 'x');
    for (let d = p; d !== home; d = path.dirname(d)) fs.utimesSync(d, when, when);
  };
  plant(`runs/${evalId}/run-old/jobs/a.harbor.log`);
  plant(`worktrees/${commit}/agent.py`);
  plant(`worktrees/${other}/agent.py`);
  const q = uniqueQueue('clean-race');
  const start = () =>
    c.workflow.start('evaluateCandidate', {
      workflowId: evalId,
      taskQueue: q,
      args: [],
      typedSearchAttributes: [{ key: VeroCandidate, value: commit }],
    });
  try {
    // The evaluation ended (here: terminated) long ago: its run dir and worktree are planned for removal.
    await (await start()).terminate('ended');
    const plan = await planClean(c, home, 30 * 86_400);
    expect(plan.items.map((i) => path.relative(home, i.path)).sort()).toEqual([
      `runs/${evalId}`,
      `worktrees/${commit}`,
      `worktrees/${other}`,
    ]);
    // start-eval --force, now: the same id runs again and writes its new run dir.
    await start();
    plant(`runs/${evalId}/run-new/jobs/a.harbor.log`, Date.now() / 1000);
    const { removed, left } = await applyClean(c, home, plan.items, 30 * 86_400);
    expect(removed.map((i) => path.relative(home, i.path))).toEqual([`worktrees/${other}`]);
    expect(left.map((l) => [path.relative(home, l.item.path), l.reason]).sort()).toEqual([
      [`runs/${evalId}`, 'its evaluation is running again'],
      [`worktrees/${commit}`, `${evalId} uses it`],
    ]);
    expect(fs.existsSync(path.join(home, 'runs', evalId, 'run-new', 'jobs', 'a.harbor.log'))).toBe(true);
    expect(fs.existsSync(path.join(home, 'worktrees', commit, 'agent.py'))).toBe(true);
    expect(fs.existsSync(path.join(home, 'worktrees', other))).toBe(false);
  } finally {
    await c.workflow
      .getHandle(evalId)
      .terminate('test over')
      .catch(() => undefined);
    await c.connection.close();
  }
});
