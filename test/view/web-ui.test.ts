/**
 * The Temporal Web UI as a user opens it with `vero ui`: the list shows the evaluations and races, not their
 * chunks or race entries (the UI's own filter, from the query vero prints). A real dev server with its UI, read
 * in Debian's Chromium. The workflows are started by type and never run (no worker): the list is visibility's.
 */
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Browser } from 'playwright-core';
import { connect } from '../../client/connection';
import { type DevServer, startDevServer } from '../../infra/dev-server';
import { findTemporalCli } from '../../infra/temporal-cli';
import type * as workflows from '../../workflows';
import { launchChromium } from '../helpers/chromium';
import { tempDir } from '../helpers/fixtures';
import { conforming } from '../helpers/json-schema';
import { runVero, until } from '../helpers/process';

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
  /** Opens the page until it lists these ids (the UI reads the list once per load; a busy machine may be slow). */
  const openListing = async (at: string, ...ids: string[]) => {
    for (let load = 1; ; load++) {
      await page.goto(at);
      const listed = await Promise.all(ids.map((id) => page.getByText(id, { exact: true }).first().waitFor({ timeout: 20_000 }))).then(
        () => true,
        () => false,
      );
      if (listed) return;
      if (load === 3) throw new Error(`the Web UI at ${at} did not list ${ids.join(', ')} in three loads`);
    }
  };
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
