/**
 * The Temporal Web UI as a user opens it with `vero ui`: the list shows the evaluations and races, not their
 * chunks or race entries (the UI's own filter, from the query vero prints); an evaluation's page shows its
 * progress (current details) and the list can be filtered by, and show, the candidate's ref. A real dev server
 * with its UI, read in Debian's Chromium. The first test's workflows are started by type and never run (no
 * worker): the list is visibility's; the second runs an evaluation on a worker with the Harbor stand-in.
 */
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Browser, Page } from 'playwright-core';
import { connect, uiLink, uiListLink } from '../../client/connection';
import { prepareEvalInput } from '../../client/eval-input';
import { startOrAttach } from '../../client/eval-start';
import { loadEvalConfig } from '../../infra/eval-config-file';
import { type DevServer, startDevServer } from '../../infra/dev-server';
import { findTemporalCli } from '../../infra/temporal-cli';
import type * as workflows from '../../workflows';
import { launchChromium } from '../helpers/chromium';
import { evalFixture, tempDir } from '../helpers/fixtures';
import { conforming } from '../helpers/json-schema';
import { runVero, spawnWorker, until } from '../helpers/process';

jest.setTimeout(180_000);

let server: DevServer;
let client: Client;
let browser: Browser;
const started: string[] = [];

beforeAll(async () => {
  const dir = tempDir('vero-web-ui-');
  server = await startDevServer({
    temporalCli: findTemporalCli(),
    dbFile: path.join(dir, 'temporal.db'),
    logFile: path.join(dir, 'server.log'),
    ui: true,
    startTimeoutMs: 60_000,
  });
  client = await connect(server.address, 'default');
  browser = await launchChromium();
});

afterAll(async () => {
  for (const id of started)
    await client?.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  await browser?.close();
  await client?.connection.close();
  await server?.stop();
});

/** Opens the page until it lists these ids (the UI reads the list once per load; a busy machine may be slow). */
async function openUntilListed(page: Page, at: string, ids: string[]): Promise<void> {
  for (let load = 1; ; load++) {
    await page.goto(at);
    const listed = await Promise.all(ids.map((id) => page.getByText(id, { exact: true }).first().waitFor({ timeout: 20_000 }))).then(
      () => true,
      () => false,
    );
    if (listed) return;
    if (load === 3) throw new Error(`the Web UI at ${at} did not list ${ids.join(', ')} in three loads`);
  }
}

/**
 * Loads an evaluation's page and opens its "User Metadata" tab (the summary, the details, and the current details),
 * then reads the current details; null when this load did not get that far (a loaded machine can take longer than a
 * click's timeout to render the page: the caller loads again, as a person would).
 */
async function userMetadataAfterLoad(page: Page, at: string, read: () => Promise<string | null>): Promise<string | null> {
  await page.goto(at, { timeout: 60_000 });
  const opened = await page
    .getByText('User Metadata', { exact: true })
    .click({ timeout: 45_000 })
    .then(
      () => true,
      () => false,
    );
  if (!opened) return null;
  await page.waitForTimeout(3_000);
  return read();
}

/** Starts a workflow of this type (a name the project's workflows export) that never runs: no worker polls. */
async function startOfType(type: keyof typeof workflows, workflowId: string): Promise<void> {
  await client.workflow.start(type, { taskQueue: `nobody-${path.basename(tempDir('q-'))}`, workflowId });
  started.push(workflowId);
}

test('`vero ui` opens the list of evaluations and races; their chunks and race entries are not in it', async () => {
  const s = path.basename(tempDir('ui-')).slice(-6).toLowerCase();
  const ids = { evaluation: `eval-${s}`, chunk: `eval-${s}-chunk-0`, race: `race-${s}`, entry: `race-${s}-entry-a` };
  await startOfType('evaluateCandidate', ids.evaluation);
  await startOfType('evaluateChunk', ids.chunk);
  await startOfType('raceCandidates', ids.race);
  await startOfType('raceEntry', ids.entry);
  await until('the four in visibility', async () => {
    let n = 0;
    for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH "eval-${s}" OR WorkflowId STARTS_WITH "race-${s}"` }))
      n += w.workflowId ? 1 : 0;
    return n === 4;
  });

  const r = await runVero(['ui', '--address', server.address, '--json']);
  expect(r.code).toBe(0);
  const { url, query } = conforming<{ url: string; query: string }>('ui', r.stdout);
  expect(query).toBe('WorkflowType IN ("evaluateCandidate", "raceCandidates")');
  expect(url.startsWith(`${server.uiUrl}/namespaces/default/workflows?query=`)).toBe(true);

  const page = await browser.newPage();
  const shown = async (id: string) => page.getByText(id, { exact: true }).count();
  const openListing = (at: string, ...ids: string[]) => openUntilListed(page, at, ids);
  try {
    // Unfiltered, the UI lists all four: what the filter leaves out is there to leave out.
    await openListing(`${server.uiUrl}/namespaces/default/workflows`, ids.chunk, ids.entry);

    await openListing(url, ids.evaluation, ids.race);
    expect({ chunk: await shown(ids.chunk), entry: await shown(ids.entry) }).toEqual({ chunk: 0, entry: 0 });
  } finally {
    await page.close();
  }

  // With an id: that evaluation's page.
  const one = conforming('ui', (await runVero(['ui', ids.evaluation, '--address', server.address, '--json'])).stdout);
  expect(one).toEqual({ url: `${server.uiUrl}/namespaces/default/workflows/${ids.evaluation}`, query: null });
});

test("an evaluation's page shows its progress as tasks finish; the list is filtered by, and shows, the candidate's ref", async () => {
  const q = `web-ui-${path.basename(tempDir('q-')).slice(-6)}`;
  // Two tasks finish at once (rewards 1 and 0), the third runs until the test cancels it.
  const f = evalFixture({
    taskQueue: q,
    address: server.address,
    tasks: { names: ['count-words', 'hello-world', 'sum-numbers'] },
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { tasks: { 'count-words': { reward: 1, duration_ms: 400_000 }, 'sum-numbers': { reward: 0 } }, default: { reward: 1 } },
    execution: { task_timeout: '900s' },
  });
  const w = spawnWorker(server.address, q);
  const input = await prepareEvalInput(loadEvalConfig(f.configFile), 'improved');
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  let step = 'start';
  try {
    const { handle } = await startOrAttach(client, input, q);
    started.push(input.evalId);
    // The page reads the current details through the workflow's metadata query (a worker answers it); the UI
    // renders each Markdown field in a frame of its own.
    const currentDetails = async (): Promise<string | null> => {
      for (const frame of page.frames()) {
        const text = await frame
          .locator('body')
          .innerText({ timeout: 2_000 })
          .catch(() => '');
        if (text.includes('tasks done')) return text;
      }
      return null;
    };
    let details: string | null = null;
    for (let load = 1; details === null || !details.includes('2 / 3 tasks done'); load++) {
      if (load > 12) throw new Error(`the evaluation's page never showed its progress; its current details: ${details}`);
      details = await userMetadataAfterLoad(page, uiLink(server.uiUrl, 'default', input.evalId)!, currentDetails);
    }
    expect(details).toMatch(/2 \/ 3 tasks done\s*· 1 running · 0 errors · mean 0\.500 over 2 finished \(errors count as 0\)/);

    step = 'the list';
    // The list, filtered by the ref's search attribute, shows the evaluation; the column the docs say to add shows the ref.
    await until('the evaluation in visibility by its ref', async () => {
      const { count } = await client.workflow.count(`VeroCandidateRef = "improved" AND WorkflowId = "${input.evalId}"`);
      return count === 1;
    });
    await openUntilListed(page, uiListLink(server.uiUrl, 'default', `VeroCandidateRef = "improved"`)!, [input.evalId]);
    expect(await page.getByRole('cell', { name: 'improved', exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Configure Columns' }).click();
    await page.getByRole('button', { name: 'Add VeroCandidateRef column' }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('cell', { name: 'improved', exact: true }).first().waitFor({ timeout: 10_000 });
    // Another ref finds nothing.
    const none = await client.workflow.count(`VeroCandidateRef = "baseline" AND WorkflowId = "${input.evalId}"`);
    expect(none.count).toBe(0);

    step = 'cancel';
    await handle.cancel();
    await handle.result().catch(() => undefined);
  } catch (e) {
    throw new Error(`at ${step}: ${(e as Error).message}\nworker log:\n${w.tail()}`);
  } finally {
    await page.close();
    await client.workflow
      .getHandle(input.evalId)
      .cancel()
      .catch(() => undefined);
    await client.workflow
      .getHandle(input.evalId)
      .result()
      .catch(() => undefined);
    w.kill('SIGTERM');
    await until('the worker stopped', async () => w.proc.exitCode !== null || w.proc.signalCode !== null);
  }
}, 600_000);
