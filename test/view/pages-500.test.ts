/**
 * `vero view`'s pages at scale, as a person sees them in Debian's headless Chromium: an evaluation of 500 tasks
 * (each with a trial) and two such evaluations compared. The pages are the viewer's own (cli/view-pages.ts),
 * served to the browser with Chart.js at the viewer's asset path; screenshots go to test-output/screenshots.
 */
import * as fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import type { EvaluationDetail, TaskView } from '../../client/view-data';
import { CHART_JS_URL, comparePage, evaluationPage } from '../../cli/view-pages';
import { CHART_JS_FILE } from '../../cli/views';
import type { CandidateResult } from '../../model/evaluation/candidate-result';
import { comparePaired, taskScoresOf } from '../../model/race/paired-comparison';
import type { TaskResult } from '../../model/evaluation/task-result';
import { launchChromium } from '../helpers/chromium';
import { screenshotPath } from '../helpers/screenshots';

jest.setTimeout(120_000);

const N = 500;
const taskName = (i: number) => `task-${String(i).padStart(3, '0')}`;

function resultOf(evalId: string, ref: string, scoreOf: (i: number) => number): CandidateResult {
  const tasks: TaskResult[] = Array.from({ length: N }, (_, i) => ({
    task: taskName(i),
    status: i % 97 === 0 ? 'error' : 'scored',
    score: i % 97 === 0 ? null : scoreOf(i),
    metrics: {},
    trial: `${taskName(i)}__AAAAAAA`,
    taskName: taskName(i),
    nTrials: 1,
    runs: 1,
    exceptions: i % 97 === 0 ? ['AgentTimeoutError'] : [],
    timedOut: false,
    jobDir: `/home/runs/${evalId}/run-1/jobs/${taskName(i)}`,
    error: i % 97 === 0 ? 'AgentTimeoutError: timed out' : null,
  }));
  const scored = tasks.filter((t) => t.status === 'scored');
  return {
    evalId,
    candidate: `${ref.padEnd(8, '0')}1234567890abcdef`,
    candidateRef: ref,
    status: 'completed',
    score: scored.reduce((a, t) => a + t.score!, 0) / N,
    scoreOfScored: null,
    errorsCountedAsZero: true,
    nTasks: N,
    nScored: scored.length,
    nErrors: N - scored.length,
    errorRate: (N - scored.length) / N,
    errorRateThreshold: 0.25,
    configDigest: 'd',
    resultFile: '/nowhere',
    tasks,
    startedAt: '2026-10-01T12:00:00Z',
    finishedAt: '2026-10-01T13:00:00Z',
  } as CandidateResult;
}

const a = resultOf('eval-aaaa', 'baseline', (i) => (i % 3 === 0 ? 1 : 0));
const b = resultOf('eval-bbbb', 'improved', (i) => (i % 2 === 0 ? 1 : 0));

function detailOf(r: CandidateResult): EvaluationDetail {
  const tasks: TaskView[] = r.tasks!.map((t) => ({
    task: t.task,
    status: t.status,
    score: t.score,
    nTrials: 1,
    runs: 1,
    chosenTrial: t.trial,
    note: t.error ?? '',
    harborLog: { label: 'harbor log', rel: `runs/${r.evalId}/run-1/jobs/${t.task}.harbor.log` },
    trials: [
      {
        name: t.trial!,
        rewards: t.score === null ? null : { reward: t.score },
        exception: t.error,
        startedAt: '2026-10-01T12:00:00Z',
        durationSec: 42.5,
        phases: [
          { phase: 'environment', sec: 3.1 },
          { phase: 'agent', sec: 35 },
          { phase: 'verifier', sec: 4.4 },
        ],
        costUsd: 0.0123,
        files: [{ label: 'result.json', rel: `runs/${r.evalId}/run-1/jobs/${t.task}/${t.trial}/result.json` }],
        pageRel: `runs/${r.evalId}/run-1/jobs/${t.task}/${t.trial}`,
      },
    ],
  }));
  return { evalId: r.evalId, workflowStatus: 'COMPLETED', result: r, partial: false, tasks };
}

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A page of the viewer, as its server would send it (Chart.js at the asset path). */
async function show(html: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.route('http://vero.test/**', (route) =>
    new URL(route.request().url()).pathname === CHART_JS_URL
      ? route.fulfill({ body: fs.readFileSync(CHART_JS_FILE), contentType: 'text/javascript' })
      : route.fulfill({ body: html, contentType: 'text/html; charset=utf-8' }),
  );
  await page.goto('http://vero.test/page');
  return page;
}

test('an evaluation of 500 tasks: a row per task, each with its trial, its transcript link and its score', async () => {
  const page = await show(evaluationPage(detailOf(b), null));
  expect(await page.locator('#tasks > tbody > tr').count()).toBe(N);
  expect(await page.locator('#tasks a.transcript').count()).toBe(N);
  expect(await page.locator('#task-task-000 td').nth(1).textContent()).toBe('error');
  expect(await page.locator('#task-task-002 td.pass').count()).toBe(1);
  await page.screenshot({ path: screenshotPath('eval-500-tasks.png') });
  await page.locator('#task-task-499').scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath('eval-500-tasks-end.png') });
  await page.close();
});

test('two evaluations of 500 tasks compared: the deltas drawn, each task that differs links its trajectories side by side', async () => {
  const comparison = comparePaired(taskScoresOf(a), taskScoresOf(b), { resamples: 1000 });
  const page = await show(comparePage({ a, b, comparison }));
  await page.waitForSelector('canvas#deltas[data-rendered="true"]');
  expect(await page.locator('#deltas tbody tr').count()).toBe(N);
  const differ = comparison.deltas.filter((d) => d.delta !== 0).length;
  expect(await page.locator('#deltas a.pair').count()).toBe(differ);
  expect(await page.locator('#deltas a.pair').first().getAttribute('href')).toBe('/pair?a=eval-aaaa&b=eval-bbbb&task=task-002');
  await page.screenshot({ path: screenshotPath('compare-500-tasks.png') });
  await page.locator('table#deltas').scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshotPath('compare-500-tasks-table.png') });
  await page.close();
});
