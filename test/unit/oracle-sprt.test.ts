import fc from 'fast-check';
import seedrandom from 'seedrandom';
import { EarlyStop } from '../../model/race/early-stop';
import { meanSavingBound, savingBound } from '../../model/race/oracle-bound';
import { closestNullLaw, type DifferenceLaw, differenceLaw, drawDifference, logOptimalBet, OracleSprt } from '../../model/race/oracle-sprt';

/** A law of D with P(+1) = plus, P(−1) = minus and E[D] below 0 (a worse candidate). */
const worseLaw = fc
  .record({ plus: fc.double({ min: 0.02, max: 0.4, noNaN: true }), gap: fc.double({ min: 0.01, max: 0.3, noNaN: true }) })
  .filter(({ plus, gap }) => 2 * plus + gap < 0.98)
  .map(({ plus, gap }): DifferenceLaw => ({ plus, minus: plus + gap }));

/** The share of n-case runs, differences drawn from `from`, that the oracle built for `law` stops. */
function stoppedShare(law: DifferenceLaw, from: DifferenceLaw, n: number, runs: number, seed: string): { share: number; saved: number } {
  const rng = seedrandom(seed);
  let stopped = 0;
  let saved = 0;
  for (let r = 0; r < runs; r++) {
    const test = new OracleSprt(law, 0, 0.05);
    for (let t = 0; t < n - 1 && !test.observe(drawDifference(from, rng())); t++);
    if (test.stoppedAt !== null) {
      stopped++;
      saved += n - test.stoppedAt;
    }
  }
  return { share: stopped / runs, saved: saved / runs };
}

describe('the benches’ oracle', () => {
  test('the closest null law is a law with mean equal to the margin, and the bet is 0 inside the null', () => {
    fc.assert(
      fc.property(worseLaw, fc.constantFrom(0, 0.03), (law, margin) => {
        const p = closestNullLaw(law, margin);
        expect(p.plus + p.minus).toBeLessThanOrEqual(1 + 1e-9);
        expect(p.plus - p.minus).toBeCloseTo(margin, 6);
        expect(logOptimalBet({ plus: law.minus, minus: law.plus }, 0)).toBe(0);
      }),
      { numRuns: 200, seed: 7 },
    );
  });

  test('its type-I error on the boundary is at most α, over 400 cases (seeded simulation)', () => {
    for (const law of [
      { plus: 0.15, minus: 0.22 },
      { plus: 0.1, minus: 0.3 },
      { plus: 0.3, minus: 0.33 },
    ]) {
      const { share } = stoppedShare(law, closestNullLaw(law, 0), 400, 2000, `type-one:${law.minus}`);
      // 2,000 runs: the share’s standard error at 5% is 0.5 points; Ville's threshold keeps it below α.
      expect(share).toBeLessThanOrEqual(0.05 + 3 * 0.005);
    }
    // A law the other way (the candidate better) is never stopped: the oracle does not bet.
    expect(stoppedShare({ plus: 0.22, minus: 0.15 }, { plus: 0.22, minus: 0.15 }, 100, 200, 'better').share).toBe(0);
  });

  test('the bound dominates what the oracle and the real rule save on the same law (seeded simulation)', () => {
    const rates = Array.from({ length: 100 }, (_, i) => 0.2 + (0.6 * i) / 99);
    const incumbent = rates.map((q) => Math.min(1, q + 0.12));
    const law = differenceLaw(rates, incumbent);
    const bound = savingBound(law, 0, 0.05, 100, 1);
    const oracle = stoppedShare(law, law, 100, 2000, 'oracle-saving').saved;
    const rng = seedrandom('rule-saving');
    let ruleSaved = 0;
    for (let r = 0; r < 300; r++) {
      const rule = new EarlyStop(100, { confidence: 0.95, margin: 0, minCases: 1, target: 'distribution' });
      for (let t = 0; t < 100; t++) {
        const d = drawDifference(law, rng());
        if (rule.observe(d === 1 ? 1 : 0, d === -1 ? 1 : 0)) break;
      }
      if (rule.verdict.stoppedAt !== null) ruleSaved += (100 - rule.verdict.stoppedAt) / 300;
    }
    expect(oracle).toBeGreaterThan(5);
    expect(oracle).toBeLessThanOrEqual(bound + 1);
    expect(ruleSaved).toBeLessThanOrEqual(bound + 1);
    // A law in the null: a valid test may stop it with probability α at most.
    expect(savingBound({ plus: 0.2, minus: 0.1 }, 0, 0.05, 100, 1)).toBeCloseTo(5, 9);
  });

  test('a truly better candidate outside the null (E[D] < margin) counts with its own bound, above α', () => {
    const worse = { plus: 0.1, minus: 0.25 };
    // Truly better than the incumbent, yet behind its selection-inflated scores: E[D] = −0.02 < margin 0.03.
    const betterOutside = { plus: 0.18, minus: 0.2 };
    expect(savingBound(betterOutside, 0.03, 0.05, 100, 8)).toBeGreaterThan(0.05 * 100 + 3);
    const perLaw = [worse, betterOutside].map((law) => savingBound(law, 0.03, 0.05, 100, 8) / 100);
    const mean = meanSavingBound([worse, betterOutside], 0.03, 0.05, 100, 8);
    expect(mean).toBeCloseTo((perLaw[0]! + perLaw[1]!) / 2, 12);
    // Counting the better one at α, as if every better candidate were in the null, understates the bound.
    expect(mean).toBeGreaterThan((perLaw[0]! + 0.05) / 2 + 0.015);
  });

  test('a law with no +1 differences has a proper closest null law and a finite bound', () => {
    const law = { plus: 0, minus: 0.18 };
    const nullLaw = closestNullLaw(law, 0);
    expect(nullLaw.plus).toBeCloseTo(0.09, 6);
    expect(nullLaw.minus).toBeCloseTo(0.09, 6);
    const bound = savingBound(law, 0, 0.05, 100, 8);
    expect(Number.isFinite(bound)).toBe(true);
    expect(bound).toBeGreaterThan(5);
    expect(bound).toBeLessThanOrEqual(100);
  });
});
