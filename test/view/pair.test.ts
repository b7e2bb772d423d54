/**
 * Two candidates on one task, side by side: two real evaluations of the example agent (the Harbor stand-in on a
 * real dev server), each chosen trial's trajectory written as the agent would, and in Debian's headless Chromium
 * the compare page's task link opens both trajectories aligned step by step with where they diverged marked;
 * `vero compare` names the same page. Screenshots go to test-output/screenshots.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startViewServer } from '../../cli/view-server';
import { withTasks } from '../../client/eval-results';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { atifStep, atifTrajectory } from '../helpers/atif';
import { launchChromium } from '../helpers/chromium';
import { evalFixture } from '../helpers/fixtures';
import { runVero } from '../helpers/process';
import { screenshotPath } from '../helpers/screenshots';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(240_000);

/** Ten steps; the first five the same for both candidates, step 6 onward each its own. */
function trajectoryOf(candidate: string): unknown {
  const steps = Array.from({ length: 10 }, (_, i) =>
    i < 5
      ? atifStep(i + 1)
      : atifStep(i + 1, { command: `${candidate === 'baseline' ? 'pytest -x' : 'sed -i s/a/b/ src/parse.py'} # ${i + 1}` }),
  );
  return atifTrajectory(steps);
}

test('a task the two candidates score differently opens both trajectories aligned step by step, the divergence marked', async () => {
  const q = uniqueQueue('pair');
  const f = evalFixture({ taskQueue: q, address: address(), execution: { concurrency: 6 } });
  const c = await client();
  const results: Record<string, CandidateResult> = {};
  await withWorker(q, async () => {
    for (const candidate of ['baseline', 'improved']) {
      const input = await prepareEvalInput(loadEvalConfig(f.configFile), candidate);
      results[candidate] = withTasks((await (await startOrAttach(c, input, q)).handle.result()) as CandidateResult);
    }
  });
  const [a, b] = [results.baseline!, results.improved!];
  const scoreOf = (r: CandidateResult, task: string) => r.tasks!.find((t) => t.task === task)!.score;
  const task = a.tasks!.map((t) => t.task).find((t) => scoreOf(a, t) !== scoreOf(b, t))!;
  expect(task).toBeDefined();
  // Each chosen trial's trajectory, as the agent writes it.
  for (const [candidate, r] of Object.entries(results)) {
    const row = r.tasks!.find((t) => t.task === task)!;
    fs.writeFileSync(path.join(row.jobDir, row.trial!, 'agent', 'trajectory.json'), JSON.stringify(trajectoryOf(candidate)));
  }

  // `vero compare` names the page.
  const cmp = await runVero(['compare', a.evalId, b.evalId, '--address', address()]);
  expect(cmp.stdout).toContain(`/pair?a=${encodeURIComponent(a.evalId)}&b=${encodeURIComponent(b.evalId)}&task=`);

  const { app, url } = await startViewServer({ client: c, home: f.home, scope: 'here', uiLink: () => null, host: '127.0.0.1', port: 0 });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/compare?a=${encodeURIComponent(a.evalId)}&b=${encodeURIComponent(b.evalId)}`);
    await page.click(`#deltas a.pair:text-is("${task}")`);
    expect(new URL(page.url()).pathname).toBe('/pair');
    expect(await page.locator('#pairs tr.same').count()).toBe(5);
    expect(await page.locator('#pairs tr.differs:not(.diverged-row)').count()).toBe(5);
    expect(await page.textContent('#divergence')).toBe('Same actions through step 5; they diverge at step 6.');
    expect(await page.textContent('#diverged')).toBe('They diverge here, at step 6.');
    const cells = page.locator('tr.diverged-row td');
    expect(await cells.nth(0).locator('.call pre').first().textContent()).toContain('pytest -x');
    expect(await cells.nth(1).locator('.call pre').first().textContent()).toContain('sed -i');
    // Each side's reward and verifier output beside its steps.
    expect(await page.locator('#reward').count()).toBe(2);
    expect(await page.locator('#verifier').count()).toBe(2);
    await page.click('a[href="#diverged"]');
    await page.screenshot({ path: screenshotPath('pair-diverged.png') });
    await page.goto(page.url().replace(/#.*/, ''));
    await page.screenshot({ path: screenshotPath('pair-top.png') });
    expect(errors).toEqual([]);
  } finally {
    await browser.close();
    await app.close();
  }
});
