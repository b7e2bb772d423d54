/**
 * `vero view` as a person uses it: the real command on a real dev server, two evaluations of the example agent,
 * driven in Debian's headless Chromium (Playwright). Pages render with their charts drawn, every link on them
 * resolves, a task's harbor log and a trial's files open, and nothing outside the home is ever served.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { evalFixture, ROOT } from '../helpers/fixtures';
import { launchChromium } from '../helpers/chromium';
import { until } from '../helpers/process';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';
import { screenshotPath } from '../helpers/screenshots';

jest.setTimeout(180_000);

/** A GET with the path exactly as written (a browser or fetch would normalise `..` away). */
function rawGet(base: string, rawPath: string): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    http
      .get({ host: u.hostname, port: u.port, path: rawPath }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

test('vero view: evaluations with the progress chart, one evaluation with its logs and trials, a comparison; nothing outside the home', async () => {
  const q = uniqueQueue('view');
  const f = evalFixture({ taskQueue: q, address: address(), execution: { concurrency: 6 } });
  const c = await client();
  const ids: Record<string, string> = {};
  await withWorker(q, async () => {
    for (const candidate of ['baseline', 'improved']) {
      const input = await prepareEvalInput(loadEvalConfig(f.configFile), candidate);
      await (await startOrAttach(c, input, q)).handle.result();
      ids[candidate] = input.evalId;
    }
  });
  // A secret next to the home, and a symlink inside the home that points at it.
  fs.writeFileSync(path.join(f.dir, 'secret.txt'), 'top secret');
  fs.symlinkSync(path.join(f.dir, 'secret.txt'), path.join(f.home, 'results', 'escape.txt'));

  const view = spawn(path.join(ROOT, 'bin', 'vero'), ['view', '-c', f.configFile, '--port', '0', '--ui-url', 'http://ui.example'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  view.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const browser = await launchChromium();
  try {
    const base = await until('vero view listening', async () => /vero view: (http:\/\/\S+)/.exec(out)?.[1]);
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

    // The evaluations: both, with the progress chart drawn in commit order (baseline, then improved).
    expect((await page.goto(base))!.status()).toBe(200);
    await page.waitForSelector('canvas#progress[data-rendered="true"]');
    expect(await page.locator('#evaluations tbody tr').count()).toBe(2);
    await page.screenshot({ path: screenshotPath('view-index.png'), fullPage: true });
    const series = await page.evaluate(() => {
      const chart = (
        window as unknown as { veroCharts: Record<string, { data: { labels: string[]; datasets: { label: string; data: unknown[] }[] } }> }
      ).veroCharts.progress!;
      return { labels: chart.data.labels, sets: Object.fromEntries(chart.data.datasets.map((d) => [d.label, d.data])) };
    });
    expect(series.labels.map((l) => l.split(' ')[0])).toEqual(['baseline', 'improved']);
    expect(series.sets.score).toEqual([2 / 6, 4.5 / 6]);
    expect(series.sets['best so far']).toEqual([2 / 6, 4.5 / 6]);
    expect(series.sets.baseline).toEqual([2 / 6, 2 / 6]);
    // The filter hides what does not match.
    await page.fill('#filter', 'improved');
    expect(await page.locator('#evaluations tbody tr:visible').count()).toBe(1);
    await page.fill('#filter', '');

    // Every link on the three pages resolves (the Web UI's point at --ui-url).
    const linksOf = async () => page.$$eval('a[href]', (as) => as.map((a) => (a as HTMLAnchorElement).href));
    const checked = new Set<string>();
    const checkLinks = async () => {
      for (const href of await linksOf()) {
        if (checked.has(href)) continue;
        checked.add(href);
        if (href.startsWith('http://ui.example/')) {
          expect(href).toMatch(/^http:\/\/ui\.example\/namespaces\/default\/workflows\/eval-/);
          continue;
        }
        expect([href, (await page.request.get(href)).status()]).toEqual([href, 200]);
      }
    };
    await checkLinks();

    // One evaluation: its tasks, a harbor log that opens, a trial's result.json.
    await page.goto(`${base}/eval/${encodeURIComponent(ids.improved!)}`);
    expect(await page.locator('#tasks > tbody > tr').count()).toBe(6);
    await page.screenshot({ path: screenshotPath('view-eval.png'), fullPage: true });
    expect(await page.locator('#web-ui').getAttribute('href')).toBe(`http://ui.example/namespaces/default/workflows/${ids.improved}`);
    await checkLinks();
    // Harbor's phase timings of each trial.
    expect(await page.locator('#task-hello-world .trials td.phases').first().textContent()).toMatch(
      /^environment [\d.]+ s · agent setup [\d.]+ s · agent [\d.]+ s · verifier [\d.]+ s$/,
    );
    const logHref = await page.locator('#task-hello-world a', { hasText: 'harbor log' }).getAttribute('href');
    await page.goto(new URL(logHref!, base).href);
    expect(await page.textContent('body')).toContain('# vero-harbor attempt 1.1');
    await page.goBack();
    // A trial's page: the stand-in agent wrote no ATIF trajectory, so the reward and verifier output, and why no transcript.
    await page.click('#task-hello-world .trials a.transcript >> nth=0');
    expect(await page.locator('#trial-summary #reward').textContent()).toMatch(/^reward = /);
    expect(await page.textContent('#verifier')).toContain('running /tests/test.sh for hello-world');
    expect(await page.textContent('#no-trajectory')).toMatch(/^No trajectory: .*agent\/trajectory\.json: no such file\.$/);
    await page.screenshot({ path: screenshotPath('view-trial.png'), fullPage: true });
    await checkLinks();
    await page.goBack();
    const resultHref = await page.locator('#task-hello-world .trials a', { hasText: 'result.json' }).first().getAttribute('href');
    const trialResult = await page.request.get(new URL(resultHref!, base).href);
    expect(trialResult.headers()['content-type']).toBe('text/plain; charset=utf-8');
    expect(trialResult.headers()['x-content-type-options']).toBe('nosniff');
    expect((JSON.parse(await trialResult.text()) as { task_name: string }).task_name).toMatch(/(^|\/)hello-world$/);

    // Two candidates side by side: the delta chart drawn, a row per task.
    await page.goto(base);
    await page.selectOption('#compare select[name="a"]', ids.baseline!);
    await page.selectOption('#compare select[name="b"]', ids.improved!);
    await page.click('#compare button[type="submit"]');
    await page.waitForSelector('canvas#deltas[data-rendered="true"]');
    expect(await page.locator('#deltas tbody tr').count()).toBe(6);
    await page.screenshot({ path: screenshotPath('view-compare.png'), fullPage: true });
    expect(await page.textContent('body')).toMatch(
      /improved \(\w+\) against baseline \(\w+\) on the 6 task\(s\) both evaluated: mean delta \+0\.417/,
    );
    await checkLinks();
    expect(pageErrors).toEqual([]);

    // Nothing outside the home: `..` (encoded or not), an absolute path, a symlink out, a directory.
    for (const p of [
      '/file/../secret.txt',
      '/file/..%2fsecret.txt',
      '/file/%2e%2e/%2e%2e/etc/passwd',
      '/file//etc/passwd',
      '/file/results/escape.txt',
      '/file/results',
    ]) {
      const r = await rawGet(base, p);
      expect([p, r.status]).toEqual([p, expect.any(Number)]);
      expect(r.body).not.toContain('top secret');
      expect(r.body).not.toContain('root:');
      expect(r.status === 403 || r.status === 404).toBe(true);
    }
    expect((await rawGet(base, '/file/results/escape.txt')).body).toMatch(/^refused: results\/escape\.txt: not a file this viewer links/);
    expect(await rawGet(base, '/file/..%2fsecret.txt')).toEqual({
      status: 403,
      body: expect.stringMatching(/^refused: \.\.\/secret\.txt: outside the home/),
    });
    expect((await rawGet(base, '/file/no/such/file')).status).toBe(403);
    expect((await rawGet(base, '/file/runs/eval-nope/run/jobs/nope.harbor.log')).status).toBe(404);
    expect((await rawGet(base, '/eval/eval-nope')).status).toBe(404);
  } finally {
    await browser.close();
    view.kill('SIGINT');
    await new Promise((r) => view.once('exit', r));
  }
  expect(view.exitCode).toBe(0);
});
