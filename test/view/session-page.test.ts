/**
 * `vero view --session DIR`: a compiled task's sidecar session drawn in Debian's headless Chromium. The session is
 * made by the sidecar's own early-stop code (sidecar/early-stop-run.ts on the real early-stop store and candidates
 * registry; the waves' outcomes are seeded simulations): an incumbent, a clearly worse candidate that early stop
 * ends, and a better one that runs every case. The page shows the stopped evaluation's sequence — the upper end
 * over the cases paired, the margin rule, a marker where it stopped — and the verdict's words; the one that ran
 * every case has no stop marker. What the session holds is escaped (a split named with markup shows as text), a
 * symlinked or malformed file is named, not followed or fatal, and without --session the page is a 404 saying so.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';
import seedrandom from 'seedrandom';
import { startViewServer } from '../../cli/view-server';
import { MAX_SESSION_RECORDS, readSession } from '../../cli/view-session-data';
import { waveOutcome } from '../helpers/wave-outcome';
import { runWithEarlyStop, type EarlyStopRequest } from '../../sidecar/early-stop-run';
import { EarlyStopStore, type StopVerdict } from '../../sidecar/early-stop-store';
import { CandidateRegistry } from '../../sidecar/registry';
import { launchChromium } from '../helpers/chromium';
import { tempDir } from '../helpers/fixtures';
import { screenshotPath } from '../helpers/screenshots';
import { runVero } from '../helpers/process';
import { client } from '../helpers/temporal';

jest.setTimeout(120_000);

const SPLIT = 'validation<b>x</b>';
const N = 100;
const ids = Array.from({ length: N }, (_, i) => i);

/** Seeded 0/1 scores with pass rate `p`. */
const scoresOf = (p: number, seed: string) => {
  const rng = seedrandom(seed);
  return ids.map(() => (rng() < p ? 1 : 0));
};

const waveOf = (commit: string, ids: number[], scores: number[]) => waveOutcome(commit, SPLIT, ids, scores, true);

/** One optimizer evaluation as the sidecar runs it with eval_early_stop, recorded in the registry as it records it. */
async function evaluate(
  admin: string,
  registry: CandidateRegistry,
  commit: string,
  scores: number[],
  direction: 'maximize' | 'minimize' = 'maximize',
): Promise<StopVerdict> {
  const req: EarlyStopRequest = {
    key: `request-${commit}`,
    commit,
    split: SPLIT,
    ids,
    rule: { confidence: 0.95, margin: 0.02, running: 'finish' },
    minCases: 1,
    waveSize: 4,
    direction,
    failureValue: 0,
    mode: 'B',
  };
  const store = new EarlyStopStore(admin);
  const { waves, verdict } = await runWithEarlyStop(req, {
    store,
    evaluateWave: async (w) => waveOf(commit, w, scores),
    refund: async () => undefined,
  });
  const samples = waves.flatMap((w) => w.samples);
  if (!verdict.stopped) store.recordScores(commit, SPLIT, Object.fromEntries(samples.map((s) => [String(s.id), s.score])));
  await registry.add({
    commit,
    split: SPLIT,
    n_samples: samples.length,
    full_split: !verdict.stopped,
    mean_score: samples.reduce((a, s) => a + (s.score ?? 0), 0) / samples.length,
    n_errors: 0,
    admin: false,
    request_id: req.key,
    early_stop: verdict,
  });
  return verdict;
}

test('vero view --session draws an early-stopped evaluation: its bound, the margin, where it stopped and why', async () => {
  const admin = path.join(tempDir('vero-session-page-'), 'vero-session');
  const registry = CandidateRegistry.open(path.join(admin, 'candidates.json'));
  const incumbent = 'a'.repeat(40);
  const worse = 'b'.repeat(40);
  const better = 'c'.repeat(40);
  await evaluate(admin, registry, incumbent, scoresOf(0.7, 'incumbent')); // no incumbent yet: runs every case
  const stopped = await evaluate(admin, registry, worse, scoresOf(0.2, 'worse'));
  const ranAll = await evaluate(admin, registry, better, scoresOf(0.95, 'better'));
  expect(stopped.stopped).toBe(true);
  expect(stopped.stopped_at).not.toBeNull();
  expect(ranAll.stopped).toBe(false);
  // A file the sidecar never wrote: a symlink out of the session (not followed) and a malformed record (named).
  fs.symlinkSync('/etc/passwd', path.join(admin, 'early-stop', 'runs', 'zz-link.json'));
  fs.writeFileSync(path.join(admin, 'early-stop', 'runs', 'zz-bad.json'), '{"key": "<script>alert(1)</script>"}');

  // The replay reaches the recorded verdict exactly (the drawing is the sequence the sidecar decided on).
  const view = readSession(path.dirname(admin)); // the trial-like dir holding vero-session/
  const worseView = view.stops.find((s) => s.commit === worse)!;
  expect(worseView.matchesVerdict).toBe(true);
  expect(worseView.path[stopped.stopped_at! - 1]).toEqual({ t: stopped.stopped_at, meanDiff: stopped.mean_diff, upper: stopped.upper });

  const c = await client();
  let app: FastifyInstance | null = null;
  let bare: FastifyInstance | null = null;
  const browser = await launchChromium();
  try {
    const base = { client: c, home: tempDir('vero-session-home-'), scope: 'here', uiLink: () => null, host: '127.0.0.1', port: 0 };
    const started = await startViewServer({ ...base, session: view.dir });
    app = started.app;
    const page = await browser.newPage({ viewport: { width: 900, height: 1400 } });
    await page.goto(started.url);
    await page.click('#session-link');
    expect(new URL(page.url()).pathname).toBe('/session');
    expect(await page.textContent('#session-summary')).toBe(
      `3 evaluation(s) recorded; 3 with early stop, 1 stopped early (${stopped.n_cases_refunded} unrun case(s) refunded).`,
    );
    // The registry's rows: the stopped one marked, with where it stopped.
    const rows = await page.$$eval('#session-evaluations tbody tr', (trs) =>
      trs.map((tr) => ({
        stopped: tr.classList.contains('was-stopped'),
        cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
      })),
    );
    expect(rows.map((r) => r.stopped)).toEqual([false, true, false]);
    expect(rows[1]!.cells[2]).toBe(SPLIT); // markup shown as text
    expect(rows[1]!.cells[7]).toBe(`stopped after ${stopped.n_cases_run} of ${N}`);

    // The stopped evaluation's sequence: the marker at the recorded stop, the margin rule, the verdict's words.
    const blocks = await page.$$eval('section.stop', (els) =>
      els.map((e) => ({
        why: e.querySelector('.why')?.textContent ?? '',
        at: e.querySelector('g.stopped')?.getAttribute('data-t') ?? null,
        markerX: Number(e.querySelector('g.stopped line')?.getAttribute('x1') ?? NaN),
        label: e.querySelector('g.stopped text')?.textContent ?? null,
        margin: e.querySelector('line.margin')?.getAttribute('data-margin') ?? null,
        upperPoints: e.querySelector('polyline.upper')?.getAttribute('points')?.split(' ').length ?? 0,
        height: e.querySelector('svg.stop-sequence')?.getBoundingClientRect().height ?? 0,
        warn: e.querySelector('.warn')?.textContent ?? null,
      })),
    );
    expect(blocks).toHaveLength(3);
    const [first, b, r] = blocks;
    expect(first!.why).toBe('ran every case: no incumbent (no other candidate has a full evaluation of these cases yet)');
    expect(first!.height).toBe(0); // nothing paired: nothing drawn
    expect(b!.why).toBe(stopped.why);
    expect(b!.at).toBe(String(stopped.stopped_at));
    expect(b!.label).toBe(`stopped after ${stopped.stopped_at} of ${N} case(s)`);
    expect(b!.markerX).toBeCloseTo(48 + (stopped.stopped_at! / N) * 580, 0);
    expect(b!.margin).toBe('0.02');
    expect(b!.upperPoints).toBe(worseView.path.length);
    expect(b!.height).toBeGreaterThan(100);
    expect(b!.warn).toBeNull();
    expect(r!.at).toBeNull(); // ran every case: no stop marker
    expect(r!.why).toBe(ranAll.why);
    expect(r!.upperPoints).toBe(N);
    // The files it could not read are named; the symlink's target is never shown.
    const problems = await page.textContent('#problems');
    expect(problems).toContain('early-stop/runs/zz-link.json: not a regular file (links are not followed)');
    expect(problems).toContain('early-stop/runs/zz-bad.json: not a record of this sidecar (commit: ');
    expect(await page.content()).not.toMatch(/root:x:|<script>alert/);
    await page.screenshot({ path: screenshotPath('session-early-stop.png'), fullPage: true });

    // Without --session: a 404 that says how to get the page.
    const other = await startViewServer(base);
    bare = other.app;
    const res = await page.goto(`${other.url}/session`);
    expect(res!.status()).toBe(404);
    expect(await page.textContent('body')).toContain('no sidecar session: start vero view with --session DIR');
    expect(await page.$('#session-link')).toBeNull();
  } finally {
    await browser.close();
    await app?.close();
    await bare?.close();
    await c.connection.close();
  }
});

test('vero view --session with a dir that is not there: refused by name before anything starts', async () => {
  const missing = path.join(tempDir('vero-session-missing-'), 'no-such-session');
  const r = await runVero(['view', '--session', missing, '--port', '0']);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain(`error: --session ${missing}: not a directory on this machine`);
  expect(r.stderr).not.toMatch(/^\s+at /m);
});

test('a minimised objective: the replay finds the reading that reaches the recorded verdict (no finalize record to say it)', async () => {
  const admin = path.join(tempDir('vero-session-min-'), 'admin');
  const registry = CandidateRegistry.open(path.join(admin, 'candidates.json'));
  await evaluate(admin, registry, 'd'.repeat(40), scoresOf(0.2, 'low-is-good'), 'minimize');
  const verdict = await evaluate(admin, registry, 'e'.repeat(40), scoresOf(0.8, 'high-is-bad'), 'minimize');
  expect(verdict.stopped).toBe(true);
  const drawn = readSession(admin).stops[1]!;
  expect(drawn.matchesVerdict).toBe(true);
  expect(drawn.path[verdict.stopped_at! - 1]).toEqual({ t: verdict.stopped_at, meanDiff: verdict.mean_diff, upper: verdict.upper });
});

/** A session made by the sidecar's code (one evaluation, its run record), under `parent`/`name`. */
async function smallSession(parent: string, name: string): Promise<string> {
  const admin = path.join(parent, name);
  await evaluate(admin, CandidateRegistry.open(path.join(admin, 'candidates.json')), 'f'.repeat(40), scoresOf(0.5, 'one'));
  return admin;
}

test('a symlinked early-stop dir is not followed: records elsewhere are not read', async () => {
  const elsewhere = await smallSession(tempDir('vero-session-elsewhere-'), 'admin');
  const admin = path.join(tempDir('vero-session-linkdir-'), 'admin');
  fs.mkdirSync(admin, { recursive: true });
  fs.symlinkSync(path.join(elsewhere, 'early-stop'), path.join(admin, 'early-stop'));
  const view = readSession(admin);
  expect(view.stops).toEqual([]);
  expect(view.problems).toContain('early-stop/runs: not a dir reached through no link');
});

test('a symlinked vero-session/ or artifacts/ inside a trial dir is not followed', async () => {
  const elsewhere = await smallSession(tempDir('vero-session-elsewhere-'), 'vero-session');
  const trialA = tempDir('vero-session-trial-a-');
  fs.symlinkSync(elsewhere, path.join(trialA, 'vero-session'));
  expect(readSession(trialA).stops).toEqual([]);
  const trialB = tempDir('vero-session-trial-b-');
  fs.symlinkSync(path.dirname(elsewhere), path.join(trialB, 'artifacts'));
  expect(readSession(trialB).stops).toEqual([]);
  // The same session as a plain dir inside a trial's artifacts/ is read.
  const trialC = tempDir('vero-session-trial-c-');
  fs.cpSync(elsewhere, path.join(trialC, 'artifacts', 'vero-session'), { recursive: true });
  expect(readSession(trialC).stops).toHaveLength(1);
});

test('a file that is not JSON is named, its content never shown (page included)', async () => {
  const admin = await smallSession(tempDir('vero-session-secret-'), 'admin');
  const secret = 'sk-live-SECRET0123456789abcdef';
  fs.writeFileSync(path.join(admin, 'early-stop', 'runs', 'zz-secret.json'), `{"key": ${secret}}`);
  fs.writeFileSync(path.join(admin, 'early-stop', 'runs', 'zz-enum.json'), JSON.stringify({ commit: secret }));
  const view = readSession(admin);
  expect(view.problems).toContain('early-stop/runs/zz-secret.json: not valid JSON');
  expect(JSON.stringify(view.problems)).not.toContain('SECRET');
  const c = await client();
  const started = await startViewServer({
    client: c,
    home: tempDir('vero-session-home-'),
    scope: 'here',
    uiLink: () => null,
    host: '127.0.0.1',
    port: 0,
    session: admin,
  });
  try {
    const page = await (await fetch(`${started.url}/session`)).text();
    expect(page).toContain('zz-secret.json: not valid JSON');
    expect(page).not.toContain('SECRET');
  } finally {
    await started.app.close();
    await c.connection.close();
  }
});

test('many run records: at most MAX_SESSION_RECORDS read, the rest counted by name', async () => {
  const admin = await smallSession(tempDir('vero-session-many-'), 'admin');
  const runs = path.join(admin, 'early-stop', 'runs');
  for (let i = 0; i < MAX_SESSION_RECORDS + 5; i++) fs.writeFileSync(path.join(runs, `x-${String(i).padStart(4, '0')}.json`), '{}');
  const view = readSession(admin);
  // One real record and the junk ones sort after it: MAX_SESSION_RECORDS files read, 6 not.
  expect(view.problems).toContain(`early-stop/runs: 6 more record(s) not shown (the viewer reads at most ${MAX_SESSION_RECORDS})`);
  expect(view.problems.filter((p) => p.startsWith('early-stop/runs/x-'))).toHaveLength(MAX_SESSION_RECORDS - 1);
});
