import seedrandom from 'seedrandom';
import { bettingSequence, type CsKind, differenceSequence, HedgedCs, logWealth, makeCs } from '../../model/race/confidence-sequence';
import { decide, PairedRace, pairAlpha, raceHorizon } from '../../model/race/decision';

const bernoulli = (rng: () => number, p: number, n: number): number[] => Array.from({ length: n }, () => (rng() < p ? 1 : 0));

describe('PrPl-EB confidence sequence', () => {
  test("each end is where the supermartingale's log-wealth reaches log(2/α) (computed from its definition)", () => {
    const rng = seedrandom('ends');
    const xs = Array.from({ length: 60 }, () => rng());
    const opts = { alpha: 0.05 };
    // Without the running intersection: compare the last interval of a prefix whose interval is not clipped.
    const t = 60;
    const seq = bettingSequence(xs.slice(0, t), opts);
    const last = seq.at(-1)!;
    const half = last.upper - last.centre;
    const lowerEnd = last.centre - half;
    const upperEnd = last.centre + half;
    expect(logWealth(xs, lowerEnd, opts, 1)).toBeCloseTo(Math.log(2 / 0.05), 9);
    expect(logWealth(xs, upperEnd, opts, -1)).toBeCloseTo(Math.log(2 / 0.05), 9);
    // Inside the interval neither side's wealth reaches 2/α.
    expect(logWealth(xs, last.mean, opts, 1)).toBeLessThan(Math.log(2 / 0.05));
    expect(logWealth(xs, last.mean, opts, -1)).toBeLessThan(Math.log(2 / 0.05));
  });

  test('matches values computed by hand from the paper for a short sequence', () => {
    // x = [1, 0], α = 0.05, c = ½. t=1: σ̂²₀ = ¼, λ₁ = min(√(2·log 40 / (¼·1·log 2)), ½) = ½, μ̂₀ = ½, v₁ = 1.
    // t=2: μ̂₁ = 3/4, σ̂²₁ = (¼ + (1 − ¾)²)/2 = 5/32; λ₂ = min(√(2 log 40 / (5/32 · 2 · log 3)), ½) = ½; v₂ = 4·(¾)² = 9/4.
    const psi = (-Math.log(0.5) - 0.5) / 4;
    const centre = (0.5 * 1 + 0.5 * 0) / 1;
    const half = (Math.log(40) + (1 + 9 / 4) * psi) / 1;
    const last = bettingSequence([1, 0], { alpha: 0.05 }).at(-1)!;
    expect(last.centre).toBeCloseTo(centre, 12);
    expect(last.lower).toBe(Math.max(0, centre - half));
    expect(last.mean).toBe(0.5);
  });

  test('narrows around the mean as data come in, and a paired difference maps back to [−1, 1]', () => {
    const rng = seedrandom('narrow');
    const xs = bernoulli(rng, 0.3, 2000);
    const seq = bettingSequence(xs, { alpha: 0.05 });
    expect(seq[99]!.upper - seq[99]!.lower).toBeGreaterThan(seq[1999]!.upper - seq[1999]!.lower);
    expect(seq[1999]!.lower).toBeLessThan(0.3);
    expect(seq[1999]!.upper).toBeGreaterThan(0.3);
    expect(seq[1999]!.upper - seq[1999]!.lower).toBeLessThan(0.12);
    const d = differenceSequence(
      xs.map((a) => ({ a, b: 1 })),
      { alpha: 0.05 },
    ).at(-1)!;
    expect(d.mean).toBeCloseTo(1 - xs.reduce((s, x) => s + x, 0) / xs.length, 12);
    expect(d.lower).toBeGreaterThan(0.6);
    expect(d.upper).toBeLessThanOrEqual(1);
  });

  test('covers the true mean at every time at once, also under optional stopping (seeded simulation)', () => {
    // Miscoverage is judged over the whole path: a stream counts as a miss if its sequence ever excludes the
    // mean, i.e. an analyst who stops as soon as the interval looks favourable would have been wrong.
    const rng = seedrandom('coverage');
    const alpha = 0.1;
    const streams = 400;
    let misses = 0;
    for (let s = 0; s < streams; s++) {
      // A paired difference of two correlated Bernoulli scores (a shared per-task difficulty): D in {−1, 0, 1}.
      const pairs = Array.from({ length: 300 }, () => {
        const easy = rng();
        return { a: rng() < 0.2 + 0.6 * easy ? 1 : 0, b: rng() < 0.25 + 0.6 * easy ? 1 : 0 };
      });
      const truth = 0.05;
      if (differenceSequence(pairs, { alpha }).some((p) => p.lower > truth || p.upper < truth)) misses++;
    }
    expect(misses / streams).toBeLessThanOrEqual(alpha);
  });

  test('refuses a level outside (0, 1)', () => {
    expect(() => bettingSequence([0.5], { alpha: 0 })).toThrow(/alpha/);
    expect(() => bettingSequence([0.5], { alpha: 1 })).toThrow(/alpha/);
  });
});

/** The hedged-capital bettors' log-wealth at m, from the theorem's definition (not the class's bookkeeping). */
function hedgedLogWealth(xs: readonly number[], m: number, alpha: number, side: 1 | -1, horizon?: number): number {
  const logTerm = Math.log(2 / alpha);
  let w = 0;
  let sumX = 0;
  let sumSq = 0;
  let varPrev = 0.25;
  xs.forEach((x, i) => {
    const t = i + 1;
    const bet = Math.sqrt((2 * logTerm) / (varPrev * (horizon ?? t * Math.log(1 + t))));
    const lambda = Math.min(bet, side === 1 ? 0.5 / m : 0.5 / (1 - m));
    w += Math.log(1 + side * lambda * (x - m));
    sumX += x;
    sumSq += (x - (0.5 + sumX) / (t + 1)) ** 2;
    varPrev = (0.25 + sumSq) / (t + 1);
  });
  return w;
}

describe('hedged-capital confidence sequence', () => {
  const alpha = 0.05;
  const logTerm = Math.log(2 / alpha);

  test("each end is the last grid point where a bettor's wealth (computed from the definition) reaches 2/α", () => {
    const rng = seedrandom('hedged-ends');
    const xs = Array.from({ length: 80 }, () => [0, 0.5, 1][Math.floor(rng() * 3)]!);
    const cs = new HedgedCs({ alpha, horizon: 30 }, 200);
    const points = xs.map((x) => cs.push(x));
    // The first time each end moved in, that end is this time's own bound (not the running intersection's).
    const lowerMoves = points.findIndex((p, i) => i > 0 && p.lower > points[i - 1]!.lower && p.lower > 0);
    expect(lowerMoves).toBeGreaterThan(0);
    const upTo = xs.slice(0, lowerMoves + 1);
    const { lower } = points[lowerMoves]!;
    expect(hedgedLogWealth(upTo, lower, alpha, 1, 30)).toBeGreaterThanOrEqual(logTerm);
    expect(hedgedLogWealth(upTo, lower + 1 / 200, alpha, 1, 30)).toBeLessThan(logTerm);
    const last = points.at(-1)!;
    expect(hedgedLogWealth(xs, last.mean, alpha, 1, 30)).toBeLessThan(logTerm);
    expect(hedgedLogWealth(xs, last.mean, alpha, -1, 30)).toBeLessThan(logTerm);
  });

  test('is narrower than PrPl-EB on a paired difference of pass/fail scores (three values), most of all mid-race', () => {
    const rng = seedrandom('hedged-narrow');
    const pairs = Array.from({ length: 200 }, () => {
      const easy = rng();
      return { a: rng() < 0.2 + 0.6 * easy ? 1 : 0, b: rng() < 0.3 + 0.6 * easy ? 1 : 0 };
    });
    const widths = (kind: CsKind) => {
      const cs = makeCs(kind, { alpha, horizon: kind === 'hedged' ? raceHorizon(200) : undefined });
      return pairs.map((p) => cs.push((p.b - p.a + 1) / 2)).map((q) => q.upper - q.lower);
    };
    const [hedged, eb] = [widths('hedged'), widths('eb')];
    expect(hedged[49]!).toBeLessThan(0.7 * eb[49]!); // 0.22 against 0.36
    expect(hedged[199]!).toBeLessThan(0.9 * eb[199]!); // 0.13 against 0.15
  });

  test('covers the true mean at every time at once (seeded simulation, tuned for a third of the stream)', () => {
    const rng = seedrandom('hedged-coverage');
    const level = 0.1;
    const streams = 300;
    let misses = 0;
    for (let s = 0; s < streams; s++) {
      const cs = new HedgedCs({ alpha: level, horizon: 100 }, 200);
      let missed = false;
      for (let t = 0; t < 300; t++) {
        const easy = rng();
        const a = rng() < 0.2 + 0.6 * easy ? 1 : 0;
        const b = rng() < 0.25 + 0.6 * easy ? 1 : 0;
        const p = cs.push((b - a + 1) / 2);
        if (p.lower > 0.525 || p.upper < 0.525) missed = true; // truth: (0.05 + 1) / 2
      }
      if (missed) misses++;
    }
    expect(misses / streams).toBeLessThanOrEqual(level);
  });
});

describe('race decision rule', () => {
  test('the union bound: each pair at 2α/(K − 1)', () => {
    expect(pairAlpha({ alpha: 0.05, nCandidates: 2 })).toBeCloseTo(0.1, 12);
    expect(pairAlpha({ alpha: 0.05, nCandidates: 5 })).toBeCloseTo(0.025, 12);
  });

  test('a clearly worse candidate is eliminated; close ones are not', () => {
    const rng = seedrandom('decide');
    const n = 120;
    const good = bernoulli(rng, 0.9, n);
    const close = good.map((x) => (rng() < 0.05 ? 1 - x : x));
    const bad = bernoulli(rng, 0.1, n);
    const d = decide([good, close, bad], [true, true, true], n, { alpha: 0.05, nCandidates: 3, margin: 0 });
    expect(d.eliminated).toEqual([2]);
    expect(d.stop).toBeNull();
    expect(d.bounds[2]!.upper).toBeLessThan(0);
    expect(d.bounds[1]!.upper).toBeGreaterThan(0);
  });

  test('stops when one is left, and within the margin when every difference is small for sure', () => {
    const ones = Array<number>(400).fill(1);
    const zeros = Array<number>(400).fill(0);
    expect(decide([ones, zeros], [true, true], 40, { alpha: 0.05, nCandidates: 2, margin: 0 }).stop).toBe('one-left');
    const same = decide([ones, ones], [true, true], 400, { alpha: 0.05, nCandidates: 2, margin: 0.2 });
    expect(same.eliminated).toEqual([]);
    expect(same.stop).toBe('within-margin');
    expect(decide([ones, ones], [true, true], 5, { alpha: 0.05, nCandidates: 2, margin: 0.2 }).stop).toBeNull();
  });

  test.each(['eb', 'hedged'] as const)('the truly best candidate is eliminated at most α of the time (%s; seeded simulation)', (cs) => {
    const rng = seedrandom('best-kept');
    const rates = [0.5, 0.45, 0.4, 0.3];
    const rules = { alpha: 0.05, nCandidates: rates.length, margin: 0, cs, horizon: cs === 'hedged' ? raceHorizon(200) : undefined };
    const runs = 100;
    let bestEliminated = 0;
    for (let r = 0; r < runs; r++) {
      const tasks = Array.from({ length: 200 }, () => rng() - 0.5);
      const scores = rates.map((p) => tasks.map((shift) => (rng() < Math.min(1, Math.max(0, p + 0.4 * shift)) ? 1 : 0)));
      const race = new PairedRace(rules);
      for (let t = 0; t < 200 && race.alive().length > 1; t++) {
        race.observe(scores.map((s) => s[t]!));
        if ((t + 1) % 5 === 0) race.decide();
      }
      if (!race.live[0]) bestEliminated++;
    }
    expect(bestEliminated / runs).toBeLessThanOrEqual(0.05);
  });
});
