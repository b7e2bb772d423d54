/**
 * A trial's trajectory in `vero view`: Harbor's ATIF read page by page as it streams (a 50 MB one answers its
 * first page without being read to its end), rendered as a transcript in Debian's headless Chromium with the
 * reward and the verifier's output beside it, hostile content shown as text (no script runs), and a file that
 * does not parse shown raw with the reason. Screenshots go to test-output/screenshots.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { startViewServer } from '../../cli/view-server';
import { trajectoryPage } from '../../client/trajectory-page';
import { isLinkedFile } from '../../client/view-data';
import { atifStep, atifTrajectory, writeLargeTrajectory, writeTrial } from '../helpers/atif';
import { launchChromium } from '../helpers/chromium';
import { tempDir } from '../helpers/fixtures';
import { screenshotPath } from '../helpers/screenshots';
import { client } from '../helpers/temporal';

jest.setTimeout(180_000);

const steps = (n: number) => Array.from({ length: n }, (_, i) => atifStep(i + 1));
const homeOf = () => path.join(tempDir('vero-trajectory-'), 'home');

test('a page of a trajectory: that page of steps, the total once the file was read to its end', async () => {
  const home = homeOf();
  const rel = writeTrial(home, 'eval-a', 'fix-csv', 'fix-csv__AAAAAAA', { reward: 1, trajectory: atifTrajectory(steps(1000)) });
  const file = `${rel}/agent/trajectory.json`;
  const first = await trajectoryPage(home, file, isLinkedFile, 0, 100);
  if (!first.ok) throw new Error(first.reason);
  expect(first.steps.map((s) => s.step_id)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  expect(first.totalSteps).toBeNull(); // it stopped reading: there are more
  expect(first.head.agent.name).toBe('claude-code');
  const last = await trajectoryPage(home, file, isLinkedFile, 900, 100);
  if (!last.ok) throw new Error(last.reason);
  expect([last.steps[0]!.step_id, last.steps.at(-1)!.step_id, last.totalSteps]).toEqual([901, 1000, 1000]);
  expect(last.head.finalMetrics?.total_cost_usd).toBe(0.42);
  // Not a file the viewer links: refused as the file route refuses it.
  expect(await trajectoryPage(home, `${rel}/config.json`, isLinkedFile, 0, 10)).toMatchObject({ ok: false, status: 403 });
});

test('a 50 MB trajectory: the first page answers without the file being read to its end', async () => {
  const home = homeOf();
  const rel = writeTrial(home, 'eval-a', 'big', 'big__AAAAAAA', { reward: 0 });
  const file = path.join(home, rel, 'agent', 'trajectory.json');
  writeLargeTrajectory(file, 2000, 25_000);
  expect(fs.statSync(file).size).toBeGreaterThan(50_000_000);
  const first = await trajectoryPage(home, `${rel}/agent/trajectory.json`, isLinkedFile, 0, 100);
  expect(first).toMatchObject({ ok: true, totalSteps: null });
  const last = await trajectoryPage(home, `${rel}/agent/trajectory.json`, isLinkedFile, 1900, 100);
  expect(last).toMatchObject({ ok: true, totalSteps: 2000 });
  // The same file cut at 40 MB with garbage after: page 1 never reaches it; the last page does, and says why.
  fs.truncateSync(file, 40_000_000);
  fs.appendFileSync(file, '<<garbage>>');
  expect(await trajectoryPage(home, `${rel}/agent/trajectory.json`, isLinkedFile, 0, 100)).toMatchObject({ ok: true, totalSteps: null });
  const cut = await trajectoryPage(home, `${rel}/agent/trajectory.json`, isLinkedFile, 1900, 100);
  expect(cut).toMatchObject({ ok: false, status: 200, reason: expect.stringMatching(/^not JSON: /), rawTruncated: true });
});

test('what does not parse is shown raw with the reason: not JSON, not ATIF, steps out of order, a result naming no call', async () => {
  const home = homeOf();
  const page = async (trajectoryText: string) => {
    const rel = writeTrial(home, 'eval-a', 't', `t__${Math.random().toString(36).slice(2, 9)}`, { reward: 0, trajectoryText });
    return trajectoryPage(home, `${rel}/agent/trajectory.json`, isLinkedFile, 0, 100);
  };
  expect(await page('{"agent": {"name": "a", "version": "1"}, "steps": [')).toMatchObject({
    ok: false,
    reason: expect.stringMatching(/^not JSON/),
  });
  expect(await page('{"hello": "world"}')).toMatchObject({ ok: false, reason: 'not an ATIF trajectory: no `agent`, no `steps`' });
  const skipped = atifTrajectory([atifStep(1), atifStep(3)]);
  expect(await page(JSON.stringify(skipped))).toMatchObject({
    ok: false,
    reason: 'not an ATIF trajectory: steps[1].step_id: expected 2 (sequential from 1), got 3',
  });
  const orphan = atifStep(2) as { observation: { results: { source_call_id: string }[] } };
  orphan.observation.results[0]!.source_call_id = 'call_nowhere';
  expect(await page(JSON.stringify(atifTrajectory([atifStep(1), orphan])))).toMatchObject({
    ok: false,
    reason: expect.stringContaining('names call_nowhere, not a tool call of step 2'),
  });
  const userTools = { ...atifStep(2), source: 'user' };
  expect(await page(JSON.stringify(atifTrajectory([atifStep(1), userTools])))).toMatchObject({
    ok: false,
    reason: expect.stringContaining('tool_calls: only an agent step has it (source is user)'),
  });
  expect(await page(JSON.stringify({ ...atifTrajectory(steps(2)), schema_version: 'ATIF-v9' }))).toMatchObject({
    ok: false,
    reason: expect.stringContaining('schema_version'),
  });
});

describe('in Chromium', () => {
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  const home = homeOf();
  const HOSTILE = `<script>window.pwned = 'script'</script><img src=x onerror="window.pwned='img'"></pre><b id="injected">bold</b>`;
  const rels = {
    long: writeTrial(home, 'eval-a', 'fix-csv', 'fix-csv__AAAAAAA', {
      reward: 1,
      trajectory: atifTrajectory(steps(1000)),
      verifierOutput: 'tests/test_parse.py::test_quoted PASSED\n1 passed in 0.02s\n',
    }),
    hostile: writeTrial(home, 'eval-a', 'evil', 'evil__AAAAAAA', {
      reward: 0,
      exception: { type: 'AgentTimeoutError', message: `timed out ${HOSTILE}` },
      verifierOutput: `FAILED ${HOSTILE}`,
      trajectory: atifTrajectory(
        [atifStep(1, { text: HOSTILE }), atifStep(2, { text: HOSTILE, command: HOSTILE, output: HOSTILE })],
        `agent ${HOSTILE}`,
      ),
    }),
    raw: writeTrial(home, 'eval-a', 'broken', 'broken__AAAAAAA', { reward: 0, trajectoryText: `{"steps": [${HOSTILE}` }),
  };

  beforeAll(async () => {
    const started = await startViewServer({ client: await client(), home, scope: 'here', uiLink: () => null, host: '127.0.0.1', port: 0 });
    app = started.app;
    base = started.url;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const open = async (rel: string, query = '') => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const r = await page.goto(`${base}/trial/${rel}${query}`);
    return { page, status: r!.status(), errors };
  };

  test('a 1,000-step trajectory reads as a transcript, a page at a time, with the reward and the verifier output', async () => {
    const { page, status } = await open(rels.long);
    expect(status).toBe(200);
    expect(await page.locator('#transcript .step').count()).toBe(100);
    expect(await page.textContent('#reward')).toBe('reward = 1.000');
    expect(await page.textContent('#verifier')).toContain('1 passed in 0.02s');
    const step2 = page.locator('#step-2');
    expect(await step2.locator('.call .name').textContent()).toBe('bash');
    expect(await step2.locator('.result pre').textContent()).toBe('src/parse.py:2: def parse(line):');
    expect(await step2.locator('header .tokens').textContent()).toBe('1002 in · 800 cached · 52 out · $0.0012');
    expect(await page.locator('.pager').first().textContent()).toMatch(/^steps 1–100 of more/);
    await page.screenshot({ path: screenshotPath('trajectory-1000-steps.png') });
    // The last page, by the pager's links.
    await page.goto(`${base}/trial/${rels.long}?page=10`);
    expect(await page.locator('#transcript .step').count()).toBe(100);
    expect(await page.locator('.pager').first().textContent()).toMatch(/^steps 901–1000 of 1000/);
    expect(await page.locator('#next').count()).toBe(0);
    // Read to its end: the trajectory's totals.
    expect(await page.textContent('#trajectory-head')).toBe(
      'claude-code 2.1.3 · anthropic/claude-sonnet-4-5 · ATIF-v1.6 · totals: 123456 in (100000 cached) · 7890 out · $0.4200',
    );
    await page.click('#prev');
    expect(page.url()).toBe(`${base}/trial/${rels.long}?page=9`);
    await page.close();
  });

  test('hostile HTML and script in a trajectory, an exception and the verifier output are shown as text; no script runs', async () => {
    const { page, status, errors } = await open(rels.hostile);
    expect(status).toBe(200);
    expect(await page.evaluate(() => (window as unknown as { pwned?: string }).pwned)).toBeUndefined();
    expect(await page.locator('script, img, #injected').count()).toBe(0);
    expect(await page.locator('#step-1 pre').first().textContent()).toBe(HOSTILE);
    expect(await page.locator('#step-2 .call pre').first().textContent()).toContain(HOSTILE.replace(/"/g, '\\"'));
    expect(await page.textContent('#exception')).toContain(`AgentTimeoutError: timed out ${HOSTILE}`);
    expect(await page.textContent('#verifier')).toContain(`FAILED ${HOSTILE}`);
    expect(await page.textContent('#trajectory-head')).toContain(`agent ${HOSTILE}`);
    expect(errors).toEqual([]);
    await page.screenshot({ path: screenshotPath('trajectory-hostile.png'), fullPage: true });
    await page.close();
  });

  test('a trajectory that does not parse is shown raw, escaped, with the reason', async () => {
    const { page, status } = await open(rels.raw);
    expect(status).toBe(200);
    expect(await page.textContent('#raw-reason')).toMatch(/^The trajectory is shown raw: not JSON: /);
    expect(await page.textContent('pre.raw')).toBe(`{"steps": [${HOSTILE}`);
    expect(await page.evaluate(() => (window as unknown as { pwned?: string }).pwned)).toBeUndefined();
    await page.screenshot({ path: screenshotPath('trajectory-raw.png') });
    await page.close();
  });

  test('only trial dirs of a run are pages; a bad page number is refused', async () => {
    for (const p of ['runs/eval-a/run-1/jobs/fix-csv', 'runs/eval-a', '..%2f..%2fetc', `${rels.long}/agent`])
      expect([p, (await fetch(`${base}/trial/${p}`)).status]).toEqual([p, 403]);
    expect((await fetch(`${base}/trial/${rels.long}?page=0`)).status).toBe(400);
    expect((await fetch(`${base}/trial/${rels.long}?page=abc`)).status).toBe(400);
    const r = await fetch(`${base}/trial/${rels.long}`);
    expect(r.headers.get('content-security-policy')).toMatch(/default-src 'none'; style-src 'unsafe-inline'/);
    expect(r.headers.get('content-security-policy')).not.toMatch(/script-src/);
  });
});
