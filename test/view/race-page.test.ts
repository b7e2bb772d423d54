/**
 * A race drawn (cli/view-race.ts), in Debian's headless Chromium: the race is decided by the race's own decision
 * code (model/race/decision.ts, as the race workflow calls it) on seeded outcomes of three candidates — one clearly
 * best, one clearly worse, one close — and the page shows each non-leader's confidence sequence as a band with its
 * mean line, the 0 rule, and a marker where an eliminated candidate went out, at the task count the race recorded.
 * Screenshot in test-output/screenshots.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import seedrandom from 'seedrandom';
import { racePage } from '../../cli/view-race';
import { PairedRace, raceHorizon } from '../../model/race/decision';
import { type RaceCandidateState, type RaceState, startingCandidateState } from '../../model/race/types';
import { launchChromium } from '../helpers/chromium';
import { tempDir } from '../helpers/fixtures';
import { screenshotPath } from '../helpers/screenshots';

jest.setTimeout(120_000);

/** A race of three candidates with pass rates `rates` on `n` tasks, decided after every task as the workflow does. */
function raceOf(rates: number[], n: number): RaceState {
  const rng = seedrandom('race-page');
  const scores = rates.map((p) => Array.from({ length: n }, () => (rng() < p ? 1 : 0)));
  const race = new PairedRace({ alpha: 0.05, nCandidates: rates.length, margin: 0, horizon: raceHorizon(n), cs: 'hedged' });
  const cands: RaceCandidateState[] = rates.map((_, i) =>
    startingCandidateState({ candidateRef: `cand-${i}`, candidate: `${i}`.repeat(40), evalId: `race-x-${i}` }),
  );
  let t = 0;
  for (; t < n && race.alive().length > 1; t++) {
    race.observe(scores.map((s, i) => (race.live[i] ? s[t]! : null)));
    const d = race.decide();
    d.bounds.forEach((b, i) => b && cands[i]!.path.push({ t: d.t, meanDiff: b.meanDiff, lower: b.lower, upper: b.upper }));
    for (const i of d.eliminated)
      Object.assign(cands[i]!, { status: 'eliminated', eliminatedAt: d.t, why: `below the leader cand-${d.leader} at 95%` });
    for (const i of race.alive()) Object.assign(cands[i]!, { tasksRun: d.t, mean: race.meanOf(i, d.t) });
  }
  const winner = race.alive().length === 1 ? cands[race.alive()[0]!]!.candidate : null;
  if (winner) cands.find((c) => c.candidate === winner)!.status = 'winner';
  const taskRuns = cands.reduce((a, c) => a + (c.eliminatedAt ?? t), 0);
  return {
    raceId: 'race-page-test',
    phase: 'done',
    order: Array.from({ length: n }, (_, i) => `task-${i}`),
    seed: 'race-page',
    confidence: 0.95,
    margin: 0,
    decidedUpTo: t,
    running: 0,
    candidates: cands,
    decisions: [],
    stopReason: winner ? 'one-left' : 'tasks-exhausted',
    winner,
    verdict: winner ? `cand-${race.alive()[0]} wins at 95%` : 'no single winner',
    spent: { trialRuns: taskRuns, costUsd: 0, taskRuns },
    fullEvaluation: { taskRuns: n * rates.length, trialRuns: n * rates.length, costUsd: null },
  };
}

test('a race page draws each candidate’s sequence against the leader and marks where the eliminated went out', async () => {
  const r = raceOf([0.9, 0.3, 0.75], 120);
  const out = r.candidates.filter((c) => c.status === 'eliminated');
  expect(out.map((c) => c.candidateRef)).toContain('cand-1');
  const file = path.join(tempDir('vero-race-page-'), 'race.html');
  fs.writeFileSync(file, racePage(r));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 1200 } });
    await page.goto(`file://${file}`);
    const charts = await page.$$eval('svg.sequence', (els) =>
      els.map((e) => ({
        candidate: e.getAttribute('data-candidate'),
        band: e.querySelector('polygon.band')?.getBoundingClientRect().height ?? 0,
        meanPoints: e.querySelector('polyline.mean')?.getAttribute('points')?.split(' ').length ?? 0,
        zero: e.querySelectorAll('line.zero').length,
        eliminatedAt: e.querySelector('g.eliminated')?.getAttribute('data-t') ?? null,
        markerX: Number(e.querySelector('g.eliminated line')?.getAttribute('x1') ?? NaN),
      })),
    );
    // Every candidate with decision points against a leader is drawn (the leader itself has none).
    const drawn = r.candidates.filter((c) => c.path.length > 0);
    expect(charts.map((c) => c.candidate).sort()).toEqual(drawn.map((c) => c.candidate).sort());
    for (const c of charts) {
      const state = r.candidates.find((x) => x.candidate === c.candidate)!;
      expect(c.band).toBeGreaterThan(10); // a visible band, rendered by the browser
      expect(c.meanPoints).toBe(state.path.length);
      expect(c.zero).toBe(1);
      expect(c.eliminatedAt).toBe(state.eliminatedAt === null ? null : String(state.eliminatedAt));
      // The marker sits at the task count the race recorded, on the chart's task axis (48 px left, 12 px right of 640).
      if (state.eliminatedAt !== null) expect(c.markerX).toBeCloseTo(48 + (state.eliminatedAt / 120) * 580, 0);
    }
    expect(await page.textContent('#verdict')).toBe(r.verdict);
    for (const c of out)
      expect(await page.textContent(`section[id="candidate-${c.candidate}"] .status`)).toBe(
        `eliminated after ${c.eliminatedAt} task(s): ${c.why}`,
      );
    await page.screenshot({ path: screenshotPath('race-page.png'), fullPage: true });
  } finally {
    await browser.close();
  }
});
