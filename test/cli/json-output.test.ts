/**
 * `--json` that scripts can rely on: every command's real output conforms to the JSON Schema file the package
 * ships for it (schemas/, generated from model/cli-json.ts), and the files are what the code generates.
 * (`eval`/`budget`: test/sidecar; `build`: test/compiler; `demo`: test/deploy/package; `query`: test/query.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { jsonSchemaOf, SCHEMA_COMMANDS } from '../../cli/json-schemas';
import { conforming } from '../helpers/json-schema';
import { evalFixture, ROOT } from '../helpers/fixtures';
import { runVero, spawnWorker, until } from '../helpers/process';
import { address, cancelAndSettle, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(180_000);

test('the shipped schema files are the ones the code generates (npm run schemas)', () => {
  const dir = path.join(ROOT, 'schemas');
  expect(fs.readdirSync(dir).sort()).toEqual(SCHEMA_COMMANDS.map((c) => `${c}.schema.json`).sort());
  for (const c of SCHEMA_COMMANDS)
    expect([c, JSON.parse(fs.readFileSync(path.join(dir, `${c}.schema.json`), 'utf8'))]).toEqual([c, jsonSchemaOf(c)]);
});

test("every evaluation command's --json conforms to its schema, camelCase, one name per field", async () => {
  const q = uniqueQueue('json');
  const f = evalFixture({
    taskQueue: q,
    address: address(),
    harbor: { env: { HARBOR_STANDIN_TIME_SCALE: '1' } },
    scenario: { tasks: { 'add-cli-flag': { reward: 1, duration_ms: 60_000 } }, default: { reward: 0.5, cost_usd: 0.01 } },
    execution: { max_cost_usd: 100, spend_pool: `json-${q}` },
  });
  const cfg = ['-c', f.configFile];
  const conn = ['--address', address()];
  const w = spawnWorker(address(), q, {});
  let running: string | null = null;
  try {
    const printed = conforming<{ tasks: string[] }>(
      'start-eval--print-config',
      (await runVero(['start-eval', ...cfg, '--candidate', 'improved', '--print-config'])).stdout,
    );
    expect(printed.tasks).toHaveLength(6);
    const tasks = 'count-words,hello-world';
    // Independent reads run at once (each its own CLI process); what waits on the server's state waits first.
    const [aOut, bOut] = await Promise.all(
      ['baseline', 'improved'].map((candidate) =>
        runVero(['start-eval', ...cfg, '--candidate', candidate, '--tasks', tasks, '--wait', '--json']),
      ),
    );
    const a = conforming<{ evalId: string; startedAt: string }>('start-eval', aOut!.stdout);
    const b = conforming<{ evalId: string }>('start-eval', bOut!.stdout);
    const started = conforming<{ evalId: string; nTasks: number; mode: string }>(
      'start-eval',
      (await runVero(['start-eval', ...cfg, '--candidate', 'improved', '--json'])).stdout,
    );
    expect(started).toMatchObject({ nTasks: 6, mode: 'started' });
    running = started.evalId;
    await until('a task of the running one has started', async () => fs.existsSync(path.join(f.home, 'runs', running!)));

    const [statusA, statusRunning, resultsA] = await Promise.all([
      runVero(['status', a.evalId, '--json', ...conn]),
      runVero(['status', running, '--json', ...conn]),
      runVero(['results', a.evalId, '--json', ...conn]),
    ]);
    const status = conforming<{ startedAt: string; finishedAt: string | null }>('status', statusA.stdout);
    expect(status.startedAt).toBe(new Date(status.startedAt).toISOString());
    conforming('status', statusRunning.stdout);
    conforming('results', resultsA.stdout);
    await until(
      'the running one has a row',
      async () => JSON.parse((await runVero(['results', running!, '--json', ...conn])).stdout).nWithResults >= 1,
    );
    const partial = conforming<{ partial: true }>('results', (await runVero(['results', running, '--json', ...conn])).stdout);
    expect(partial.partial).toBe(true);
    await until(
      'both listed',
      async () => (JSON.parse((await runVero(['list', ...cfg, '--all', '--json'])).stdout) as unknown[]).length >= 3,
    );
    const jobs = path.join(f.home, 'runs', a.evalId);
    const runDir = path.join(jobs, fs.readdirSync(jobs)[0]!, 'jobs');
    const [list, best, compare, setConcurrency, spendPool, clean, trialsOut] = await Promise.all([
      runVero(['list', ...cfg, '--all', '--json']),
      runVero(['best', ...cfg, '--all', '--json']),
      runVero(['compare', a.evalId, b.evalId, '--json', ...conn]),
      runVero(['set-concurrency', running, '2', '--json', ...conn]),
      runVero(['spend-pool', `json-${q}`, '--json', ...conn]),
      runVero(['clean', ...cfg, '--json']),
      runVero(['trials', runDir, '--json']),
    ]);
    const rows = conforming<{ startedAt: string }[]>('list', list.stdout);
    expect(rows.every((r) => typeof r.startedAt === 'string')).toBe(true);
    conforming('best', best.stdout);
    conforming('compare', compare.stdout);
    conforming('set-concurrency', setConcurrency.stdout);
    conforming('spend-pool', spendPool.stdout);
    conforming('clean', clean.stdout);
    const trials = conforming<{ tasks: { jobDir: string }[] }>('trials', trialsOut.stdout);
    // The rows of `vero results`, less what only a run knows.
    const resultRows = (JSON.parse(resultsA.stdout) as { tasks: Record<string, unknown>[] }).tasks;
    for (const [i, row] of trials.tasks.entries()) {
      const { runs: _runs, timedOut: _timedOut, notes: _notes, harborVersion: _version, ...known } = resultRows[i]!;
      expect(row).toEqual(known);
    }
  } finally {
    if (running) await cancelAndSettle(running);
    w.kill('SIGTERM');
  }
});
