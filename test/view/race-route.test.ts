/**
 * `vero view`'s race page over a real race (real dev server, real worker, the Harbor stand-in): a candidate that
 * solves every task against one that solves none, 12 tasks. The index lists the race (loaded again, as a person
 * would reload, while visibility lags); its link opens the race's page in Debian's headless Chromium, where the
 * eliminated candidate is marked at the task count the race recorded, with its reason. Ids that name no race are
 * refused by name (400: not a race id; 404: no such race), escaped, never with a stack.
 */
import * as fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { parse, stringify } from 'yaml';
import { startViewServer } from '../../cli/view-server';
import { prepareRaceInput, raceResult, startRace } from '../../client/race-client';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { launchChromium } from '../helpers/chromium';
import { evalFixture, tempDir } from '../helpers/fixtures';
import { raceDataset, raceRepo } from '../helpers/race-fixture';
import { until } from '../helpers/process';
import { screenshotPath } from '../helpers/screenshots';
import { address, client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(180_000);

const names = Array.from({ length: 12 }, (_, i) => `t${String(i).padStart(2, '0')}`);

test('vero view lists a race and draws it: the eliminated candidate marked where it went out; bad ids refused by name', async () => {
  const q = uniqueQueue('race-view');
  const f = evalFixture({ taskQueue: q, address: address(), execution: { concurrency: 4 } });
  const dir = tempDir('vero-race-view-');
  const yaml = parse(fs.readFileSync(f.configFile, 'utf8')) as { agent_repo: string; tasks: { source: { path: string } } };
  yaml.agent_repo = raceRepo(dir, [
    ['strong', ['*']],
    ['weak', []],
  ]);
  yaml.tasks.source.path = raceDataset(dir, 'race-view', names);
  fs.writeFileSync(f.configFile, stringify(yaml));
  const cfg = loadEvalConfig(f.configFile);
  const input = await prepareRaceInput(cfg, ['strong', 'weak'], {
    confidence: 0.95,
    margin: 0,
    seed: 'view',
    batchSize: 2,
    onEliminated: 'stop',
  });
  const c = await client();
  let app: FastifyInstance | null = null;
  const browser = await launchChromium();
  try {
    const r = await withWorker(q, async () => {
      await startRace(c, input, q);
      return raceResult(c, input.raceId);
    });
    const weak = r.candidates.find((x) => x.candidateRef === 'weak')!;
    expect(weak.status).toBe('eliminated');
    const started = await startViewServer({ client: c, home: cfg.home, scope: 'here', uiLink: () => null, host: '127.0.0.1', port: 0 });
    app = started.app;
    const page = await browser.newPage({ viewport: { width: 900, height: 1200 } });

    // The index lists the race (visibility can lag the race's close: loaded again until it does).
    const link = `a.race[href="/race/${input.raceId}"]`;
    await until(
      'the index lists the race',
      async () => {
        await page.goto(started.url);
        return (await page.$(link)) !== null;
      },
      30_000,
    );
    await page.click(link);
    expect(new URL(page.url()).pathname).toBe(`/race/${input.raceId}`);
    expect(await page.textContent('h1')).toBe(`Race ${input.raceId}`);
    expect(await page.textContent('#verdict')).toBe(r.verdict);

    // The eliminated candidate: its status says where and why; its chart's marker sits at that task count.
    expect(await page.textContent(`section[id="candidate-${weak.candidate}"] .status`)).toBe(
      `eliminated after ${weak.eliminatedAt} task(s): ${weak.why}`,
    );
    const chart = await page.$eval(`svg.sequence[data-candidate="${weak.candidate}"]`, (e) => ({
      at: e.querySelector('g.eliminated')?.getAttribute('data-t') ?? null,
      x: Number(e.querySelector('g.eliminated line')?.getAttribute('x1') ?? NaN),
      visible: (e.querySelector('g.eliminated text')?.getBoundingClientRect().width ?? 0) > 0,
      band: e.querySelector('polygon.band')?.getBoundingClientRect().height ?? 0,
    }));
    expect(chart.at).toBe(String(weak.eliminatedAt));
    expect(chart.x).toBeCloseTo(48 + (weak.eliminatedAt! / names.length) * 580, 0);
    expect(chart.visible).toBe(true);
    expect(chart.band).toBeGreaterThan(10);
    await page.screenshot({ path: screenshotPath('race-view.png'), fullPage: true });

    // Ids that name no race: refused by name, the id escaped, no stack.
    const get = async (p: string) => {
      const res = await page.goto(`${started.url}${p}`);
      return { status: res!.status(), text: (await page.textContent('body')) ?? '', html: await page.content() };
    };
    const bad = await get(`/race/${encodeURIComponent('<img src=x onerror=alert(1)>')}`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('race id: expected race-<16 hex digits>');
    expect(bad.html).not.toContain('<img src=x');
    const unknown = await get('/race/race-0000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('race-0000000000000000: no such race on this server');
    for (const x of [bad, unknown]) expect(x.text).not.toMatch(/^\s+at /m);
    // An evaluation of the race is not the race.
    const entry = await get(`/race/${encodeURIComponent(weak.evalId)}`);
    expect(entry.status).toBe(400);
  } finally {
    await browser.close();
    await app?.close();
    await c.connection.close();
  }
});
