/** `vero report`: the HTML page, rendered and screenshotted in headless Chromium as a person would see it. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderReport } from '../../cli/report';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import type { TaskResult } from '../../model/evaluation/task-result';
import { evalFixture, tempDir } from '../helpers/fixtures';
import { chromium } from '../helpers/chromium';
import { runVero } from '../helpers/process';
import { address, uniqueQueue, withWorker } from '../helpers/temporal';
import { screenshotPath } from '../helpers/screenshots';

jest.setTimeout(180_000);

const task = (name: string, score: number | null, status: 'scored' | 'error' = 'scored'): TaskResult => ({
  task: name,
  status,
  score,
  metrics: {},
  trial: `${name}__AAAAAAA`,
  taskName: name,
  nTrials: 1,
  runs: 1,
  exceptions: [],
  timedOut: false,
  jobDir: '/j',
  error: status === 'error' ? 'no trial has verifier rewards' : null,
});
/** A chart's Chart.js config, as the page carries it. */
function chartConfig(html: string, id: string): { data: { labels: string[]; datasets: { data: unknown[] }[] } } {
  const m = new RegExp(`<script type="application/json" data-chart="${id}">(.*?)</script>`, 's').exec(html);
  if (!m) throw new Error(`no chart ${id}`);
  return JSON.parse(m[1]!) as { data: { labels: string[]; datasets: { data: unknown[] }[] } };
}

const result = (ref: string, sha: string, tasks: TaskResult[], score: number): CandidateResult => ({
  evalId: `eval-${sha}`,
  candidate: sha.padEnd(40, '0'),
  candidateRef: ref,
  status: 'completed',
  score,
  scoreOfScored: score,
  errorsCountedAsZero: true,
  nTasks: tasks.length,
  nScored: tasks.filter((t) => t.status === 'scored').length,
  nErrors: tasks.filter((t) => t.status === 'error').length,
  errorRate: 0,
  errorRateThreshold: 0.25,
  configDigest: 'd',
  resultFile: '/r',
  tasks,
  startedAt: '2026-11-30T00:00:00Z',
  finishedAt: '2026-11-30T00:01:00Z',
});

test('renders ranked candidates, a task matrix with error cells, links, and escapes everything', () => {
  const html = renderReport(
    [
      result('<script>alert(1)</script>', 'aaa', [task('t1', 0), task('t2', null, 'error')], 0),
      result('improved', 'bbb', [task('t1', 1), task('t2', 0.5)], 0.75),
    ],
    { uiLink: (id) => `http://ui/${id}?a=1&b=2`, generatedAt: 'now' },
  );
  expect(html).not.toContain('<script>alert(1)</script>');
  expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  expect(html.indexOf('improved (bbb00000)')).toBeLessThan(html.indexOf('&lt;script&gt;')); // ranked by score
  expect(html).toContain('<td class="err" title="no trial has verifier rewards">error</td>');
  expect(html).toContain('<td class="part" title="trial t2__AAAAAAA">0.50</td>');
  expect(html).toContain('href="http://ui/eval-bbb?a=1&amp;b=2"');
  expect(html.match(/<tr><th scope="row">/g)).toHaveLength(2);
  // The best against the runner-up, as vero compare would say it: both tasks moved up (the error row counts as 0).
  expect(html).toContain('<h2>Best vs runner-up</h2>');
  expect(html).toContain('mean delta +0.750');
  // The per-task deltas are a Chart.js bar chart: t1 0 → 1 and t2 0 (error) → 0.5, then the mean's interval.
  const deltas = chartConfig(html, 'deltas');
  expect(deltas.data.labels).toEqual(['t1', 't2', 'mean (95% CI)']);
  expect(deltas.data.datasets[0]!.data).toEqual([1, 0.5, null]);
  expect(deltas.data.datasets[1]!.data.at(-1)).toEqual([0.5, 1]);
  expect(chartConfig(html, 'scores').data.datasets[0]!.data).toEqual([0.75, 0]);
  // The escaped label stays escaped inside the chart's JSON, too.
  expect(html).toContain('\\u003cscript>alert(1)\\u003c/script>');
  // Both of two tasks moved up: the interval excludes 0, but the sign test cannot (p = 0.5): not resolved (one rule).
  expect(html).toContain('<p class="verdict unresolved">not resolved at this sample size: mean delta +0.750 over 2 shared task(s)');
  expect(html).toContain('aria-label="per-task deltas, improved (bbb00000) minus &lt;script&gt;');
});

test('one candidate: no comparison section', () => {
  const html = renderReport([result('only', 'ccc', [task('t1', 1)], 1)], { generatedAt: 'now' });
  expect(html).not.toContain('Best vs runner-up');
});

test('vero report on two evaluations, opened in headless Chromium', async () => {
  const q = uniqueQueue('report');
  const f = evalFixture({ taskQueue: q, address: address() });
  const out = path.join(tempDir(), 'report.html');
  await withWorker(q, async () => {
    for (const candidate of ['baseline', 'improved']) {
      const r = await runVero(['start-eval', '-c', f.configFile, '--candidate', candidate, '--wait', '--json']);
      expect(r.code).toBe(0);
    }
    let r = { code: null as number | null, stdout: '', stderr: '' };
    for (let i = 0; i < 30; i++) {
      r = await runVero(['report', '-c', f.configFile, '-o', out]);
      if (r.code === 0 && r.stdout.includes('2 candidate(s)')) break;
      await new Promise((res) => setTimeout(res, 300));
    }
    expect(r.stdout).toBe(`wrote ${out} (2 candidate(s))\n`);
  });
  const html = fs.readFileSync(out, 'utf8');
  expect(html).toContain('improved (a05ba230)');
  expect(html).toContain('baseline (');
  expect(html.match(/<tr><th scope="row">/g)).toHaveLength(6);
  const dom = chromium(['--dump-dom', `file://${out}`]);
  expect(dom).toContain('Tasks × candidates');
  // Chart.js (inlined: the page is self-contained) drew every chart: scores, progress, the best's deltas.
  for (const id of ['scores', 'progress', 'deltas']) expect(dom).toMatch(new RegExp(`<canvas id="${id}"[^>]*data-rendered="true"`));
  expect(dom).toContain('Best vs runner-up');
  expect(html).not.toMatch(/<script src=/);
  const png = path.join(tempDir(), 'report.png');
  chromium([`--screenshot=${png}`, '--window-size=1100,800', `file://${out}`]);
  const bytes = fs.readFileSync(png);
  expect(bytes.subarray(1, 4).toString()).toBe('PNG');
  expect(bytes.length).toBeGreaterThan(10_000);
  fs.copyFileSync(png, screenshotPath('report.png'));
});
