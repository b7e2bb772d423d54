/**
 * `eval_early_stop` in a running sidecar, on Harbor's stand-in: an optimizer's evaluation of a candidate worse than
 * the incumbent on an aggregate-only split stops, is refunded what it did not run, tells the optimizer the verdict
 * and the aggregate only, and records where and why for finalize; re-sent after a sidecar restart, it runs nothing
 * and decides nothing again; with the option taken out, the same candidate runs every case as before.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { git, harborStarts, listFiles, post, setup, startSidecar } from '../helpers/sidecar';

jest.setTimeout(300_000);

const VALIDATION = ['count-words', 'fix-csv-parser', 'hello-world', 'reverse-string', 'sum-numbers'];

/** The optimizer's next candidate: solves `solves` (globs), each trial taking `ms`. */
function commitCandidate(work: string, solves: string[], ms: number): string {
  fs.writeFileSync(path.join(work, 'harbor-standin-agent.json'), JSON.stringify({ solves, duration_ms: ms }));
  git(work, 'add', '-A');
  git(work, 'commit', '-q', '-m', `solves ${solves.join(',') || 'nothing'}`);
  return git(work, 'rev-parse', 'HEAD');
}

const remainingSamples = async (url: string) =>
  (
    (await (await fetch(`${url}/status`)).json()) as { splits: { split: string; budget: { remaining_sample_budget: number } | null }[] }
  ).splits.find((x) => x.split === 'validation')!.budget!.remaining_sample_budget;

test('a worse candidate stops against the incumbent, refunded, aggregate only; re-sent after a restart it runs nothing again', async () => {
  const s = await setup({
    budgets: [{ split: 'validation', total_run_budget: 5, total_sample_budget: 20 }],
    build: {
      partition: { validation: VALIDATION, test: ['add-cli-flag'] },
      splits: [
        { split: 'validation', access: 'non_viewable', min_aggregate_cases: 2 },
        { split: 'test', access: 'no_access' },
      ],
      eval_early_stop: { confidence: 0.6, margin: 0, running: 'stop' },
    },
  });
  let side = await startSidecar(s);
  try {
    // The incumbent: every case, nothing to compare with yet.
    const incumbent = commitCandidate(s.work, ['*'], 100);
    const first = await post(side.url, '/eval', { split: 'validation', request_id: 'early-stop-incumbent' });
    expect(first.json).toMatchObject({ commit: incumbent, n_samples: 5, mean_score: 1, early_stop: { stopped: false, incumbent: null } });
    expect(await remainingSamples(side.url)).toBe(15);

    // A candidate that solves nothing: stopped once the sequence says it cannot win, one case at a time (running: stop).
    const worse = commitCandidate(s.work, [], 100);
    const startsBefore = harborStarts(s).length;
    const body = { split: 'validation', request_id: 'early-stop-worse-0001' };
    const stopped = await post(side.url, '/eval', body);
    expect(stopped.status).toBe(200);
    const run = (stopped.json.early_stop as { n_cases_run: number }).n_cases_run;
    expect(run).toBeGreaterThanOrEqual(2); // the split's min_aggregate_cases
    expect(run).toBeLessThan(5);
    expect(stopped.json).toMatchObject({ commit: worse, n_samples: run, mean_score: 0 });
    // The optimizer is told the verdict and counts: not where in the order it was decided, not the paired difference.
    expect(stopped.json.early_stop).toEqual({
      stopped: true,
      n_cases_asked: 5,
      n_cases_run: run,
      n_cases_refunded: 5 - run,
      incumbent,
      confidence: 0.6,
      margin: 0,
      why: `stopped after ${run} of 5 case(s): it cannot beat the incumbent by 0 at 0.6 confidence; ${5 - run} unrun case(s) refunded`,
    });
    const disclosed = path.join(s.cfg.paths.agent_volume, 'results', `validation__${worse.slice(0, 12)}`);
    expect(listFiles(disclosed)).toEqual(['summary.json']);
    expect(JSON.parse(fs.readFileSync(path.join(disclosed, 'summary.json'), 'utf8'))).toEqual(
      expect.objectContaining({ early_stop: stopped.json.early_stop, n_samples: run }),
    );
    // Charged for the cases that ran only; one harbor run per wave of one case.
    expect(await remainingSamples(side.url)).toBe(15 - run);
    expect(harborStarts(s).length - startsBefore).toBe(run);
    // finalize's record (the registry's candidates) says where and why.
    const candidates = () =>
      (
        JSON.parse(fs.readFileSync(path.join(s.cfg.paths.admin_volume, 'candidates.json'), 'utf8')) as {
          records: Record<string, unknown>[];
        }
      ).records;
    const recorded = candidates().find((r) => r.commit === worse)!;
    expect(recorded).toMatchObject({ n_samples: run, full_split: false, early_stop: { stopped: true, stopped_at: run, incumbent } });
    expect((recorded.early_stop as { why: string }).why).toMatch(
      /^stopped after \d+ of 5 case\(s\): mean\(candidate − incumbent\) = -1\.000/,
    );

    // Killed after the decision; the optimizer re-sends the request: nothing runs, nothing is charged or refunded again.
    expect(await side.stop('SIGKILL')).toBeNull();
    side = await startSidecar(s);
    const startsAtRestart = harborStarts(s).length;
    const again = await post(side.url, '/eval', body);
    expect(again.json.early_stop).toEqual(stopped.json.early_stop);
    expect(again.json).toMatchObject({ n_samples: run, mean_score: 0 });
    expect(harborStarts(s).length).toBe(startsAtRestart);
    expect(await remainingSamples(side.url)).toBe(15 - run);
    const ledger = JSON.parse(fs.readFileSync(path.join(s.cfg.paths.admin_volume, 'ledger.json'), 'utf8')) as { refunds: unknown[] };
    expect(ledger.refunds).toHaveLength(1);

    // Off again (the same session, the option taken out): the same worse candidate runs every case, nothing refunded.
    await side.stop();
    const { eval_early_stop: _on, ...off } = s.cfg;
    fs.writeFileSync(s.serveFile, JSON.stringify(off));
    side = await startSidecar(s);
    const full = await post(side.url, '/eval', { split: 'validation', request_id: 'early-stop-off-0001' });
    expect(full.json).toMatchObject({ commit: worse, n_samples: 5, mean_score: 0 });
    expect(full.json).not.toHaveProperty('early_stop');
    expect(await remainingSamples(side.url)).toBe(10 - run);
    expect(candidates().find((r) => r.request_id === 'early-stop-off-0001')).not.toHaveProperty('early_stop');
  } finally {
    await side.stop();
  }
});
