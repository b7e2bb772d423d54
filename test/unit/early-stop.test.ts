import seedrandom from 'seedrandom';
import { EarlyStop, earlyStopOrder } from '../../model/race/early-stop';

/** Runs the test over the cases in the given order; the number of cases run when it stopped, or null. */
function stopAt(test: EarlyStop, cand: number[], inc: number[], order: number[]): number | null {
  for (const i of order) if (test.observe(cand[i]!, inc[i]!)) return test.verdict.stoppedAt;
  return null;
}

const shuffled = (n: number, rng: () => number) => {
  const o = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [o[i], o[j]] = [o[j]!, o[i]!];
  }
  return o;
};

describe('early stop against the incumbent', () => {
  test('stops a clearly worse candidate early, says where and why, and never before minCases', () => {
    const inc = Array.from({ length: 100 }, (_, i) => (i % 10 < 8 ? 1 : 0));
    const cand = Array.from({ length: 100 }, (_, i) => (i % 10 < 2 ? 1 : 0));
    const order = earlyStopOrder(
      inc.map((_, i) => `c${i}`),
      'seed',
    ).map((c) => Number(c.slice(1)));
    const test = new EarlyStop(100, { confidence: 0.95, margin: 0, minCases: 20 });
    const at = stopAt(test, cand, inc, order);
    expect(at).not.toBeNull();
    expect(at!).toBeGreaterThanOrEqual(20);
    expect(at!).toBeLessThan(40);
    expect(test.verdict.upper).toBeLessThan(0);
    expect(test.verdict.why).toMatch(new RegExp(`after ${at} of 100 case`));
    // A candidate as good as the incumbent runs every case.
    expect(stopAt(new EarlyStop(100, { confidence: 0.95, margin: 0, minCases: 1 }), inc, inc, order)).toBeNull();
  });

  test('the order is seeded: the same seed, the same order, every case once', () => {
    const cases = Array.from({ length: 50 }, (_, i) => `c${i}`);
    expect(earlyStopOrder(cases, 'a')).toEqual(earlyStopOrder(cases, 'a'));
    expect(earlyStopOrder(cases, 'a')).not.toEqual(earlyStopOrder(cases, 'b'));
    expect([...earlyStopOrder(cases, 'a')].sort()).toEqual([...cases].sort());
  });

  test("'cases': a candidate whose full evaluation beats the incumbent by the margin is stopped at most α of the time", () => {
    // The hardest case for the guarantee: over the 100 cases its mean beats the incumbent's by exactly the margin.
    const rng = seedrandom('cases-guarantee');
    const alpha = 0.1;
    const margin = 0.02;
    let stopped = 0;
    const runs = 400;
    for (let r = 0; r < runs; r++) {
      const inc = Array.from({ length: 100 }, () => (rng() < 0.5 ? 1 : 0));
      const cand = [...inc];
      // 20 cases where it wins, 18 where it loses: mean difference 0.02.
      const flips = shuffled(100, rng);
      flips.slice(0, 38).forEach((i, k) => (cand[i] = k < 20 ? 1 : 0));
      flips.slice(0, 38).forEach((i, k) => (inc[i] = k < 20 ? 0 : 1));
      const test = new EarlyStop(100, { confidence: 1 - alpha, margin, minCases: 1 });
      if (stopAt(test, cand, inc, shuffled(100, rng)) !== null) stopped++;
    }
    // Monte-Carlo error of 400 runs at a rate of α: about 0.015.
    expect(stopped / runs).toBeLessThanOrEqual(alpha);
  });

  test("'distribution': a candidate whose true mean beats the incumbent's by the margin is stopped at most α of the time", () => {
    const rng = seedrandom('distribution-guarantee');
    const alpha = 0.1;
    let stopped = 0;
    const runs = 300;
    for (let r = 0; r < runs; r++) {
      const easy = Array.from({ length: 100 }, () => rng());
      const inc = easy.map((e) => (rng() < 0.2 + 0.6 * e ? 1 : 0));
      const cand = easy.map((e) => (rng() < 0.22 + 0.6 * e ? 1 : 0));
      const test = new EarlyStop(100, { confidence: 1 - alpha, margin: 0.02, minCases: 1, target: 'distribution' });
      if (stopAt(test, cand, inc, shuffled(100, rng)) !== null) stopped++;
    }
    expect(stopped / runs).toBeLessThanOrEqual(alpha);
  });

  test('refuses a confidence outside (0.5, 1)', () => {
    expect(() => new EarlyStop(10, { confidence: 1, margin: 0, minCases: 1 })).toThrow(/confidence/);
    expect(() => new EarlyStop(10, { confidence: 0.4, margin: 0, minCases: 1 })).toThrow(/confidence/);
  });
});
