/**
 * A race that ended without a result (here: one whose input its workflow refuses, a config failure) is reported with
 * why, wherever its state is read: raceState lets the WorkflowFailedError and its cause through, MCP's race_status
 * says the cause, and the viewer's race page shows it. The index's race list looks through the namespace's newest races
 * only, and a listing that failed is said by name.
 */
import { randomBytes } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { startViewServer } from '../../cli/view-server';
import { RACE_TOOLS } from '../../cli/mcp-race-tools';
import type { EvalToolContext } from '../../cli/mcp-registry';
import { listRaces, raceState } from '../../client/race-client';
import { racesSection } from '../../cli/view-race';
import { causeChain, ConfigError } from '../../model/errors';
import { tempDir } from '../helpers/fixtures';
import { until } from '../helpers/process';
import { client, uniqueQueue, withWorker } from '../helpers/temporal';

jest.setTimeout(60_000);

test('a race that failed: its cause reaches raceState, race_status and the race page', async () => {
  const c = await client();
  const taskQueue = uniqueQueue('race-failed');
  const raceId = `race-${randomBytes(8).toString('hex')}`;
  try {
    const handle = await c.workflow.start('raceCandidates', { workflowId: raceId, taskQueue, args: [{ candidates: 'none' }] });
    await withWorker(taskQueue, () => handle.result().catch(() => undefined));
    expect((await handle.describe()).status.name).toBe('FAILED');

    const e = await raceState(c, raceId).then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(WorkflowFailedError);
    expect(causeChain(e)).toContain('invalid race input');

    const status = RACE_TOOLS.find((t) => t.name === 'race_status')!;
    const ctx = { client: c } as EvalToolContext;
    const said = await status.run(ctx, { raceId }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(said).toBeInstanceOf(ConfigError); // a config failure stays one
    expect((said as Error).message).toContain(`race ${raceId} ended without a result: invalid race input`);

    const started = await startViewServer({
      client: c,
      home: tempDir('vero-race-failed-'),
      scope: 'here',
      uiLink: () => null,
      host: '127.0.0.1',
      port: 0,
    });
    try {
      const res = await fetch(`${started.url}/race/${raceId}`);
      expect(res.status).toBe(500);
      expect(await res.text()).toContain('invalid race input');
    } finally {
      await started.app.close();
    }
  } finally {
    await c.connection.close();
  }
});

test('the index lists races among the namespace newest only, and says so by name when listing fails', async () => {
  const c = await client();
  const taskQueue = uniqueQueue('race-listed');
  const raceId = `race-${randomBytes(8).toString('hex')}`;
  const home = tempDir('vero-race-listed-');
  try {
    const handle = await c.workflow.start('raceCandidates', { workflowId: raceId, taskQueue, args: [{}], memo: { home } });
    await withWorker(taskQueue, () => handle.result().catch(() => undefined));
    await until('visibility lists the race', async () => (await listRaces(c, home)).some((r) => r.raceId === raceId), 30_000);
    expect(await listRaces(c, home, 200, 0)).toEqual([]); // none of the namespace's races looked through: none listed
  } finally {
    await c.connection.close();
  }
  const failed = racesSection('connection refused <b>');
  expect(failed).toContain('<p class="note" id="races-failed">The races could not be listed: connection refused &lt;b&gt;</p>');
});
