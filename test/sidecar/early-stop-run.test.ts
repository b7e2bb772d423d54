/**
 * Early stop's money and durability, on the real ledger and the real early-stop records (the waves are simulated
 * outcomes: the statistics and the bookkeeping are what is under test here; test/sidecar/early-stop-sidecar.test.ts
 * runs it in a sidecar on Harbor's stand-in): the sample budget charged is exactly the cases that ran, a restart
 * after the decision runs nothing again and keeps the verdict, and an aggregate split's answer tells no case.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { waveOutcome } from '../helpers/wave-outcome';
import { verdictForTier } from '../../sidecar/early-stop-eval';
import { type EarlyStopRequest, runWithEarlyStop } from '../../sidecar/early-stop-run';
import { EarlyStopStore } from '../../sidecar/early-stop-store';
import { Ledger, LedgerFile, ledgerProblems } from '../../sidecar/ledger';
import { chooseCommit } from '../../sidecar/finalize';
import { CandidateRegistry } from '../../sidecar/registry';
import { earlyStopSidecar, ES_SPLIT, type WaveKind } from '../helpers/early-stop';
import { tempDir } from '../helpers/fixtures';

const SPLIT = 'validation';

const waveOf = (commit: string, ids: number[], scores: number[]) => waveOutcome(commit, SPLIT, ids, scores, false);

interface World {
  dir: string;
  ledgerFile: string;
  budgets: { split: string; total_sample_budget: number; total_run_budget: number }[];
  store: EarlyStopStore;
}

function world(total: number, incumbent: number[]): World {
  const dir = tempDir('vero-early-stop-');
  const store = new EarlyStopStore(path.join(dir, 'admin'));
  store.recordScores('incumbent', SPLIT, Object.fromEntries(incumbent.map((s, i) => [String(i), s])));
  return {
    dir,
    ledgerFile: path.join(dir, 'ledger.json'),
    budgets: [{ split: SPLIT, total_sample_budget: total, total_run_budget: 50 }],
    store,
  };
}

/** Admits (reserves every case, as POST /eval does) and runs one evaluation; counts the cases the waves ran. */
async function evaluate(w: World, req: EarlyStopRequest, scores: number[]) {
  const ledger = Ledger.open(w.ledgerFile, w.budgets);
  await ledger.reserve(SPLIT, req.ids.length, req.commit, { id: req.key, samples: req.ids.join(',') });
  let ran = 0;
  const result = await runWithEarlyStop(req, {
    store: w.store,
    evaluateWave: async (ids) => {
      ran += ids.length;
      return waveOf(req.commit, ids, scores);
    },
    refund: async (n, why) => void (await ledger.refund(req.key, SPLIT, n, why)),
  });
  return { ...result, ran, ledger };
}

const request = (n: number, over: Partial<EarlyStopRequest> = {}): EarlyStopRequest => ({
  key: 'request-0001',
  commit: 'candidate',
  split: SPLIT,
  ids: Array.from({ length: n }, (_, i) => i),
  rule: { confidence: 0.8, margin: 0, running: 'finish' },
  minCases: 1,
  waveSize: 4,
  direction: 'maximize',
  failureValue: 0,
  mode: 'B',
  ...over,
});

const remainingSamples = (file: string) =>
  LedgerFile.parse(JSON.parse(fs.readFileSync(file, 'utf8'))).budgets[SPLIT]!.remaining_sample_budget;

test('money: the sample budget charged is exactly the cases that ran, never more, never less, and a restart charges nothing', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 3, max: 40 }).chain((n) =>
        fc.record({
          incumbent: fc.array(fc.constantFrom(0, 1), { minLength: n, maxLength: n }),
          candidate: fc.array(fc.constantFrom(0, 0.5, 1), { minLength: n, maxLength: n }),
          spare: fc.integer({ min: 0, max: 30 }),
          waveSize: fc.integer({ min: 1, max: 9 }),
          minCases: fc.integer({ min: 1, max: n }),
          confidence: fc.constantFrom(0.6, 0.8, 0.95),
          margin: fc.constantFrom(0, 0.05, 0.2),
          running: fc.constantFrom('stop' as const, 'finish' as const),
        }),
      ),
      async (c) => {
        const n = c.incumbent.length;
        const w = world(n + c.spare, c.incumbent);
        const req = request(n, {
          waveSize: c.waveSize,
          minCases: c.minCases,
          rule: { confidence: c.confidence, margin: c.margin, running: c.running },
        });
        const first = await evaluate(w, req, c.candidate);
        expect(first.verdict.n_cases_run).toBe(first.ran);
        expect(first.verdict.n_cases_refunded).toBe(n - first.ran);
        expect(remainingSamples(w.ledgerFile)).toBe(n + c.spare - first.ran);
        // The ledger with its refund is one a restarted sidecar accepts (the build's budgets agree with it).
        expect(ledgerProblems(LedgerFile.parse(JSON.parse(fs.readFileSync(w.ledgerFile, 'utf8'))), w.budgets)).toEqual([]);
        // A restart (the same request re-sent after the sidecar came back): nothing runs, nothing is charged or refunded again.
        const again = await evaluate(w, req, c.candidate);
        expect(again.ran).toBe(0);
        expect(again.verdict).toEqual(first.verdict);
        expect(remainingSamples(w.ledgerFile)).toBe(n + c.spare - first.ran);
        fs.rmSync(w.dir, { recursive: true, force: true });
      },
    ),
    { numRuns: 60 },
  );
});

test('a clearly worse candidate stops, is refunded, and a restart after the decision neither runs nor decides again', async () => {
  const w = world(40, Array(30).fill(1));
  const req = request(30, { waveSize: 1 });
  const first = await evaluate(w, req, Array(30).fill(0));
  expect(first.verdict).toMatchObject({ stopped: true, incumbent: 'incumbent', n_cases_asked: 30 });
  expect(first.ran).toBe(first.verdict.n_cases_run);
  expect(first.ran).toBeLessThan(30);
  expect(first.verdict.why).toContain(`${30 - first.ran} unrun case(s) refunded`);
  expect(remainingSamples(w.ledgerFile)).toBe(40 - first.ran);
  const ledger = JSON.parse(fs.readFileSync(w.ledgerFile, 'utf8')) as { refunds: { key: string; n: number }[] };
  expect(ledger.refunds).toEqual([expect.objectContaining({ key: req.key, n: 30 - first.ran })]);
  // Killed after the decision: the new process finds the verdict and runs nothing, whatever the waves would say now.
  const second = await runWithEarlyStop(req, {
    store: new EarlyStopStore(path.join(w.dir, 'admin')),
    evaluateWave: () => Promise.reject(new Error('a wave ran again after the decision')),
    refund: async (n, why) => void (await Ledger.open(w.ledgerFile, w.budgets).refund(req.key, SPLIT, n, why)),
  });
  expect(second.verdict).toEqual(first.verdict);
  expect(remainingSamples(w.ledgerFile)).toBe(40 - first.ran);
});

test('killed between waves: the waves that ran are not run again, the rest are, one decision', async () => {
  const w = world(40, Array(30).fill(1));
  const req = request(30, { waveSize: 2 });
  const ran: number[][] = [];
  const ledger = Ledger.open(w.ledgerFile, w.budgets);
  await ledger.reserve(SPLIT, 30, req.commit, { id: req.key, samples: req.ids.join(',') });
  const dies = runWithEarlyStop(req, {
    store: w.store,
    evaluateWave: async (ids) => {
      if (ran.length === 2) throw new Error('killed');
      ran.push(ids);
      return waveOf(req.commit, ids, Array(30).fill(0));
    },
    refund: () => Promise.reject(new Error('no decision yet')),
  });
  await expect(dies).rejects.toThrow('killed');
  const resumed = await runWithEarlyStop(req, {
    store: new EarlyStopStore(path.join(w.dir, 'admin')),
    evaluateWave: async (ids) => {
      ran.push(ids);
      return waveOf(req.commit, ids, Array(30).fill(0));
    },
    refund: async (n, why) => void (await ledger.refund(req.key, SPLIT, n, why)),
  });
  const all = ran.flat();
  expect(new Set(all).size).toBe(all.length); // no case ran twice
  expect(resumed.verdict.n_cases_run).toBe(all.length);
  expect(resumed.verdict.stopped).toBe(true);
  expect(remainingSamples(w.ledgerFile)).toBe(40 - all.length);
});

test('no incumbent, or a candidate as good as it: every case runs in one evaluation, nothing refunded', async () => {
  const none = tempDir('vero-early-stop-none-');
  const ledgerFile = path.join(none, 'ledger.json');
  const budgets = [{ split: SPLIT, total_sample_budget: 20, total_run_budget: 5 }];
  const waves: number[][] = [];
  const r = await runWithEarlyStop(request(10), {
    store: new EarlyStopStore(path.join(none, 'admin')),
    evaluateWave: async (ids) => (waves.push(ids), waveOf('candidate', ids, Array(10).fill(0))),
    refund: async (n, why) => void (await Ledger.open(ledgerFile, budgets).refund('k', SPLIT, n, why)),
  });
  expect(waves).toEqual([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]]);
  expect(r.verdict).toMatchObject({ stopped: false, incumbent: null, n_cases_refunded: 0 });
  expect(r.verdict.why).toContain('no incumbent');
  const w = world(20, Array(10).fill(1));
  const same = await evaluate(w, request(10), Array(10).fill(1));
  expect(same.verdict).toMatchObject({ stopped: false, n_cases_run: 10, n_cases_refunded: 0 });
  expect(remainingSamples(w.ledgerFile)).toBe(10);
});

test("an aggregate split's answer holds the verdict and counts only: not where in the order, not the paired difference", async () => {
  const w = world(40, Array(30).fill(1));
  const { verdict } = await evaluate(w, request(30, { waveSize: 1, minCases: 5 }), Array(30).fill(0));
  expect(verdict.stopped).toBe(true);
  expect(verdict.n_cases_run).toBeGreaterThanOrEqual(5);
  const shown = verdictForTier(verdict, 'non_viewable');
  expect(Object.keys(shown).sort()).toEqual([
    'confidence',
    'incumbent',
    'margin',
    'n_cases_asked',
    'n_cases_refunded',
    'n_cases_run',
    'stopped',
    'why',
  ]);
  expect(shown.why).toBe(
    `stopped after ${verdict.n_cases_run} of 30 case(s): it cannot beat the incumbent by 0 at 0.8 confidence; ${30 - verdict.n_cases_run} unrun case(s) refunded`,
  );
  expect(verdictForTier(verdict, 'viewable')).toEqual(verdict);
});

test("a wave the gateway refused ends the evaluation (refunded); one wave's error rate does not (it is the whole evaluation's)", async () => {
  const w = world(40, Array(12).fill(0));
  const refused = await runWithEarlyStop(request(12, { waveSize: 3 }), {
    store: w.store,
    evaluateWave: async (ids) => ({
      ...waveOf('candidate', ids, Array(12).fill(1)),
      invalid: 'the gateway refused 2 model call(s)',
      invalidBy: 'gateway',
    }),
    refund: async (n, why) => void (await Ledger.open(w.ledgerFile, w.budgets).refund('gw', SPLIT, n, why)),
  });
  expect(refused.verdict).toMatchObject({ stopped: true, n_cases_run: 3, n_cases_refunded: 9, stopped_at: null });
  expect(refused.verdict.why).toBe(
    'no further wave: a wave is not a score of the candidate (the gateway refused 2 model call(s)); 9 unrun case(s) refunded',
  );
  const ran: number[] = [];
  const errorRate = await runWithEarlyStop(request(12, { key: 'request-0002', waveSize: 3 }), {
    store: w.store,
    evaluateWave: async (ids) => (
      ran.push(...ids),
      { ...waveOf('candidate', ids, Array(12).fill(1)), invalid: '1 of 3 task(s) have no rewarded trial', invalidBy: 'error_rate' }
    ),
    refund: () => Promise.reject(new Error('nothing to refund')),
  });
  expect(errorRate.verdict).toMatchObject({ stopped: false, n_cases_run: 12 });
  expect(ran.sort((a, b) => a - b)).toEqual(request(12).ids);
});

test('a wave that answers for fewer cases than it ran: those cases are paid and never dispatched again', async () => {
  const w = world(40, Array(10).fill(1));
  const dispatched: number[] = [];
  const r = await runWithEarlyStop(request(10, { waveSize: 4 }), {
    store: w.store,
    evaluateWave: async (ids) => (dispatched.push(...ids), waveOf('candidate', ids.slice(0, 1), Array(10).fill(1))),
    refund: () => Promise.reject(new Error('nothing to refund')),
  });
  expect(dispatched.sort((a, b) => a - b)).toEqual(request(10).ids);
  expect(r.verdict).toMatchObject({ stopped: false, n_cases_run: 10, n_cases_refunded: 0 });
});

test('minimising: a candidate with higher (worse) scores stops; error rows pair with nothing; a score outside [0, 1] turns the test off', async () => {
  const w = world(100, Array(30).fill(0));
  const worse = await evaluate(w, request(30, { waveSize: 1, direction: 'minimize' }), Array(30).fill(1));
  expect(worse.verdict.stopped).toBe(true);
  // Error rows (no score) on every case: nothing is paired, so nothing is decided against the candidate.
  const errors = await runWithEarlyStop(request(30, { key: 'request-errors', waveSize: 5 }), {
    store: w.store,
    evaluateWave: async (ids) => {
      const out = waveOf('candidate', ids, Array(30).fill(0));
      return { ...out, samples: out.samples.map((s) => ({ ...s, score: null, error: 'no rewarded trial' })) };
    },
    refund: () => Promise.reject(new Error('nothing to refund')),
  });
  expect(errors.verdict).toMatchObject({ stopped: false, n_cases_run: 30, stopped_at: null, mean_diff: null });
  const waves: number[][] = [];
  const unbounded = await runWithEarlyStop(request(30, { key: 'request-unbounded', waveSize: 2 }), {
    store: w.store,
    evaluateWave: async (ids) => (waves.push(ids), waveOf('candidate', ids, Array(30).fill(7))),
    refund: () => Promise.reject(new Error('nothing to refund')),
  });
  expect(unbounded.verdict).toMatchObject({ stopped: false, n_cases_run: 30 });
  expect(unbounded.verdict.why).toBe('ran every case: a score outside [0, 1], which the test cannot bound');
  expect(waves.map((x) => x.length)).toEqual([2, 28]); // the rest in one evaluation once the test is off
});

test("an aggregate-only split: whatever its waves say (a gateway refusal the candidate caused itself), the answer's mean covers min_aggregate_cases cases and the money adds up", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 8 }).chain((minAgg) =>
        fc.integer({ min: minAgg, max: 16 }).chain((n) =>
          fc.record({
            minAgg: fc.constant(minAgg),
            asked: fc.integer({ min: minAgg, max: n }),
            incumbent: fc.option(fc.array(fc.constantFrom(0, 1, null), { minLength: n, maxLength: n }), { nil: undefined }),
            candidate: fc.array(fc.constantFrom(0, 0.5, 1, null), { minLength: n, maxLength: n }),
            kinds: fc.array(fc.constantFrom<WaveKind>('valid', 'gateway', 'error_rate'), { minLength: 1, maxLength: 4 }),
            running: fc.constantFrom('stop' as const, 'finish' as const),
            maxConcurrency: fc.integer({ min: 1, max: 6 }),
            n: fc.constant(n),
          }),
        ),
      ),
      async (c) => {
        const side = earlyStopSidecar({
          nCases: c.n,
          minAggregateCases: c.minAgg,
          running: c.running,
          maxConcurrency: c.maxConcurrency,
          sampleBudget: 100,
        });
        try {
          if (c.incumbent) side.recordIncumbent('incumbent', c.incumbent);
          const ids = Array.from({ length: c.asked }, (_, i) => i);
          const r = await side.evaluate('candidate', ids, 'request-prop-01', c.candidate, c.kinds);
          // The answer's mean (n_samples, mean_score) is over the cases that came back: never fewer than the floor.
          expect(r.out.samples.length).toBeGreaterThanOrEqual(c.minAgg);
          expect(r.verdict!.n_cases_run).toBeGreaterThanOrEqual(c.minAgg);
          const charged = 100 - side.ledger.remaining(ES_SPLIT)!.remaining_sample_budget!;
          expect(r.verdict!.n_cases_refunded + charged).toBe(c.asked);
          expect(charged).toBeGreaterThanOrEqual(r.dispatched);
          expect(charged).toBe(r.verdict!.n_cases_run);
        } finally {
          fs.rmSync(side.dir, { recursive: true, force: true });
        }
      },
    ),
    { numRuns: 80 },
  );
});

test('running: stop, a first wave the gateway refused: it runs min_aggregate_cases cases, then ends, refunded the rest', async () => {
  const side = earlyStopSidecar({ nCases: 10, minAggregateCases: 5, running: 'stop', sampleBudget: 20 });
  try {
    side.recordIncumbent('incumbent', Array(10).fill(1));
    const r = await side.evaluate(
      'candidate',
      side.cfg.mode_b!.partition[ES_SPLIT]!.map((_, i) => i),
      'request-gw-0001',
      Array(10).fill(1),
      ['gateway', 'valid'],
    );
    expect(r.dispatched).toBe(5);
    expect(r.out).toMatchObject({ invalid: expect.stringContaining('gateway refused'), invalidBy: 'gateway' });
    expect(r.out.samples).toHaveLength(5);
    expect(r.verdict).toMatchObject({ stopped: true, n_cases_run: 5, n_cases_refunded: 5, stopped_at: null });
    expect(side.ledger.remaining(ES_SPLIT)!.remaining_sample_budget).toBe(15);
  } finally {
    fs.rmSync(side.dir, { recursive: true, force: true });
  }
});

test("finalize: an early-stopped evaluation's partial mean never enters the shortlist, however much of the split it ran", async () => {
  const side = earlyStopSidecar({ nCases: 10, minAggregateCases: 2, running: 'stop', sampleBudget: 40 });
  try {
    const registry = CandidateRegistry.open(path.join(side.dir, 'admin', 'candidates.json'));
    const record = { split: ES_SPLIT, n_errors: 0, admin: false };
    // The incumbent, evaluated on a few cases only (under the coverage: not shortlisted, but gradable).
    await registry.add({ ...record, commit: 'i'.repeat(40), n_samples: 3, full_split: false, mean_score: 0.5 });
    const verdict = { stopped: true, stopped_at: 9, n_cases_asked: 10, n_cases_run: 9, n_cases_refunded: 1, incumbent: 'i'.repeat(40) };
    const why = { confidence: 0.8, margin: 0, mean_diff: -0.5, upper: -0.1, why: 'stopped' };
    await registry.add({
      ...record,
      commit: 'c'.repeat(40),
      n_samples: 9,
      full_split: false,
      mean_score: 1,
      early_stop: { ...verdict, ...why },
    });
    const choice = await chooseCommit(side.cfg, side.engine, registry);
    expect(choice.commit).toBe('i'.repeat(40));
    expect(choice.reason).toContain(`no candidate was evaluated on "${ES_SPLIT}"`);
    expect(choice.reason).toContain('graded the last evaluated candidate');
  } finally {
    fs.rmSync(side.dir, { recursive: true, force: true });
  }
});
