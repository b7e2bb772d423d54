/** The paired comparison against known values: McNemar's exact test, the bootstrap against its closed form. */
import { jStat } from 'jstat';
import { beatsRunnerUp, bootstrapMeanCi, comparePaired, mcnemarExact } from '../../model/race/paired-comparison';

const scores = (xs: Record<string, number>) => new Map(Object.entries(xs));

describe('exact McNemar', () => {
  it('is the two-sided binomial test of the discordant pairs', () => {
    // 1 vs 9 discordant: 2 · P(X ≤ 1 | n = 10, p = 1/2) = 2 · 11 / 1024.
    expect(mcnemarExact(1, 9)).toBeCloseTo(22 / 1024, 12);
    expect(mcnemarExact(9, 1)).toBeCloseTo(22 / 1024, 12);
    // 0 vs 5: 2 / 32.
    expect(mcnemarExact(0, 5)).toBeCloseTo(1 / 16, 12);
    expect(mcnemarExact(3, 3)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
  });
});

describe('the paired bootstrap', () => {
  it('is reproducible with a seed, and matches the normal interval of a mean on a large sample', () => {
    const xs = Array.from({ length: 400 }, (_, i) => ((i * 37) % 11) / 10 - 0.3);
    const a = bootstrapMeanCi(xs, 5_000, 'seed-1');
    expect(bootstrapMeanCi(xs, 5_000, 'seed-1')).toEqual(a);
    expect(bootstrapMeanCi(xs, 5_000, 'seed-2')).not.toEqual(a);
    const m = xs.reduce((s, x) => s + x, 0) / xs.length;
    const se = jStat.stdev(xs, false) / Math.sqrt(xs.length);
    expect(a[0]).toBeCloseTo(m - 1.96 * se, 2);
    expect(a[1]).toBeCloseTo(m + 1.96 * se, 2);
  });
});

describe('comparePaired', () => {
  const named = (f: (i: number) => number) =>
    scores(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`t${String(i).padStart(2, '0')}`, f(i)])));

  it('B better: the interval excludes 0; flips and deltas listed; tasks evaluated by one side only are named', () => {
    const a = named((i) => (i < 10 ? 1 : 0));
    const b = named((i) => (i < 25 ? 1 : 0));
    a.set('only-a', 1);
    b.set('only-b', 0);
    const c = comparePaired(a, b);
    expect(c.n).toBe(30);
    expect(c.meanDelta).toBeCloseTo(0.5, 12);
    expect(c.verdict).toBe('B better');
    expect(c.ci95![0]).toBeGreaterThan(0);
    expect(c.flippedToPass).toHaveLength(15);
    expect(c.flippedToFail).toEqual([]);
    expect(c.mcnemar).toMatchObject({ aOnly: 0, bOnly: 15 });
    expect(c.mcnemar.pValue).toBeCloseTo(2 / 2 ** 15, 9);
    expect(c.onlyInA).toEqual(['only-a']);
    expect(c.onlyInB).toEqual(['only-b']);
    expect(c.summary).toMatch(/^B better: mean delta \+0\.500 over 30 shared task\(s\) \(95% CI \+0\.\d+ to \+0\.\d+\)$/);
  });

  it('a small delta on few tasks is not resolved, and says about how many more tasks would resolve it', () => {
    const a = scores({ t1: 1, t2: 0, t3: 1, t4: 0, t5: 1, t6: 0 });
    const b = scores({ t1: 1, t2: 1, t3: 0, t4: 1, t5: 1, t6: 0 });
    const c = comparePaired(a, b);
    expect(c.verdict).toBe('not resolved');
    expect(c.flippedToPass).toEqual(['t2', 't4']);
    expect(c.flippedToFail).toEqual(['t3']);
    const d = [0, 1, -1, 1, 0, 0];
    const need = Math.ceil(((1.96 * jStat.stdev(d, true)) / (1 / 6)) ** 2);
    expect(c.tasksToResolve).toBe(need);
    expect(c.summary).toContain(`about ${need - 6} more task(s) would resolve a delta of this size`);
  });

  it('A better, no difference, and no shared task', () => {
    expect(
      comparePaired(
        named(() => 1),
        named(() => 0),
      ).verdict,
    ).toBe('A better');
    expect(
      comparePaired(
        named(() => 1),
        named(() => 1),
      ).summary,
    ).toBe('not resolved: no difference on 30 shared task(s)');
    expect(comparePaired(scores({ x: 1 }), scores({ y: 1 })).summary).toBe('not resolved: the two evaluations share no task');
  });
});

describe('one decision rule for vero compare and vero best', () => {
  it('a few tasks that all moved one way: the bootstrap interval excludes 0, the sign test (McNemar) cannot: not resolved', () => {
    const a = scores({ t1: 0, t2: 0 });
    const b = scores({ t1: 1, t2: 1 });
    const c = comparePaired(a, b);
    expect(c.ci95![0]).toBeGreaterThan(0);
    expect(c.mcnemar.pValue).toBe(0.5);
    expect(c.verdict).toBe('not resolved');
    expect(beatsRunnerUp({ tasks: rows(b) }, { tasks: rows(a) })).toBe(false);
  });

  it('vero best calls the winner separable exactly when vero compare says it is better', () => {
    const cases: [Record<string, number>, Record<string, number>][] = [
      [
        Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`t${i}`, i < 10 ? 1 : 0])),
        Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`t${i}`, i < 25 ? 1 : 0])),
      ],
      [
        { t1: 1, t2: 0, t3: 1 },
        { t1: 1, t2: 1, t3: 1 },
      ],
      [
        { t1: 0.2, t2: 0.4, t3: 0.1, t4: 0.3, t5: 0.2, t6: 0.1 },
        { t1: 0.9, t2: 0.8, t3: 0.7, t4: 0.9, t5: 0.95, t6: 0.6 },
      ],
    ];
    for (const [lo, hi] of cases) {
      const verdict = comparePaired(scores(lo), scores(hi)).verdict;
      expect(beatsRunnerUp({ tasks: rows(scores(hi)) }, { tasks: rows(scores(lo)) })).toBe(verdict === 'B better');
    }
    expect(comparePaired(scores(cases[0]![0]), scores(cases[0]![1])).verdict).toBe('B better');
    expect(comparePaired(scores(cases[2]![0]), scores(cases[2]![1])).verdict).toBe('B better');
  });
});

function rows(m: Map<string, number>) {
  return [...m].map(([task, score]) => ({ task, status: 'scored', score }));
}
