import seedrandom from 'seedrandom';
import { type WeightedDraw, WeightedWorCs } from '../../model/race/confidence-sequence';
import { PairedRace } from '../../model/race/decision';
import { racePlan, taskWeights, UNIFORM_SHARE, weightedOrder } from '../../model/race/sampling';
import { raceOrder } from '../../model/race/types';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

/** A population of paired differences in {−1, 0, 1} and an earlier history that says where they are nonzero. */
function population(rng: () => number, n: number): { d: number[]; history: number[][] } {
  const d: number[] = [];
  const history: number[][] = [];
  for (let u = 0; u < n; u++) {
    // Hopeless tasks, where b is a little better, and contested ones, where it is much worse: drawing contested
    // tasks more often and not reweighting would make b look worse than it is over all the tasks.
    const contested = rng() < 0.5;
    const p = contested ? 0.5 : 0.05;
    const a = rng() < p ? 1 : 0;
    const b = rng() < (contested ? 0.2 : 0.15) ? 1 : 0;
    d.push(b - a);
    history.push(Array.from({ length: 8 }, () => (rng() < p ? 1 : 0)));
  }
  return { d, history };
}

/** K⁺ and K⁻ at μ from the equations (not the class's bookkeeping): the log-capital of each bettor. */
function capitalAt(mu: number, xs: number[], draws: WeightedDraw[], alpha: number, lo: number, hi: number): [number, number] | null {
  const n = draws.length;
  let up = 0;
  let down = 0;
  let sumX = 0;
  let sumZ = 0;
  let sumSq = 0;
  let varPrev = (hi - lo) ** 2 / 4;
  for (let i = 0; i < xs.length; i++) {
    const t = i + 1;
    const left = n - i;
    const m = (n * mu - sumX) / left;
    if (m < lo || m > hi) return null;
    const { rel, minRel, maxRel } = draws[i]!;
    const z = xs[i]! / rel;
    const ends = [lo / minRel, lo / maxRel, hi / minRel, hi / maxRel];
    const bet = Math.sqrt((2 * Math.log(2 / alpha)) / (varPrev * t * Math.log(1 + t)));
    up += Math.log(1 + Math.min(bet, 0.5 / (m - Math.min(...ends))) * (z - m));
    down += Math.log(1 - Math.min(bet, 0.5 / (Math.max(...ends) - m)) * (z - m));
    sumX += xs[i]!;
    sumZ += z;
    sumSq += (z - ((lo + hi) / 2 + sumZ) / (t + 1)) ** 2;
    varPrev = ((hi - lo) ** 2 / 4 + sumSq) / (t + 1);
  }
  return [up, down];
}

describe('the importance-weighted, without-replacement betting sequence', () => {
  test("its interval is the set of means neither bettor's capital (computed from the equations) has ruled out", () => {
    const rng = seedrandom('definition');
    const { d, history } = population(rng, 50);
    const { order, draws } = weightedOrder(ids(50), taskWeights(history)!, 'definition');
    const xs = order.slice(0, 30).map((id) => d[Number(id.slice(1))]!);
    const cs = new WeightedWorCs({ alpha: 0.1, population: 50, range: [-1, 1] });
    let point = cs.current();
    xs.forEach((x, i) => (point = cs.push(x, draws[i]!)));
    const log20 = Math.log(2 / 0.1);
    const kept = Array.from({ length: 399 }, (_, k) => -1 + (2 * (k + 1)) / 400).filter((mu) => {
      const c = capitalAt(mu, xs, draws, 0.1, -1, 1);
      return c !== null && c[0] < log20 && c[1] < log20;
    });
    expect(kept.length).toBeGreaterThan(0);
    // The hull of the kept grid points, widened by a grid step (the running intersection can only be tighter).
    expect(point.lower).toBeGreaterThanOrEqual(kept[0]! - 0.005 - 1e-12);
    expect(point.upper).toBeLessThanOrEqual(kept.at(-1)! + 0.005 + 1e-12);
    expect(point.upper - point.lower).toBeLessThan(1.2);
  });

  test('covers the mean over all the units at every time at once, with probabilities from a history (seeded simulation)', () => {
    // Miscoverage is judged over the whole path: a run counts as a miss if its sequence ever excludes the mean.
    const alpha = 0.1;
    const runs = 200;
    const n = 200;
    const rng = seedrandom('coverage');
    let misses = 0;
    for (let r = 0; r < runs; r++) {
      const { d, history } = population(rng, n);
      const truth = d.reduce((a, b) => a + b, 0) / d.length;
      // Far bolder weights than taskWeights gives (16× between tasks): the guarantee holds for any positive ones.
      const bold = history.map((h) => (h.some((x) => x !== h[0]) ? 4 : 0.25));
      const { order, draws } = weightedOrder(ids(n), r % 4 ? bold : taskWeights(history)!, `coverage-${r}`);
      const cs = new WeightedWorCs({ alpha, population: n, range: [-1, 1], horizon: 60 });
      const missed = order.some((id, i) => {
        const p = cs.push(d[Number(id.slice(1))]!, draws[i]!);
        return p.lower > truth || p.upper < truth;
      });
      if (missed) misses++;
    }
    // The bound is α; the Monte-Carlo error of 200 runs at a rate of α is about 0.02. (Left unweighted, draws by the
    // bold weights miss about half the time.)
    expect(misses / runs).toBeLessThanOrEqual(alpha);
  });

  test('with every unit drawn, the interval is the population mean (up to a grid step); its estimate is unbiased', () => {
    const rng = seedrandom('collapse');
    const xs = Array.from({ length: 40 }, () => rng());
    const truth = xs.reduce((a, b) => a + b, 0) / xs.length;
    const weights = xs.map(() => 0.5 + rng());
    let meanOfEstimates = 0;
    for (let r = 0; r < 200; r++) {
      const { order, draws } = weightedOrder(ids(40), weights, `collapse-${r}`);
      const cs = new WeightedWorCs({ alpha: 0.05, population: 40, range: [0, 1] });
      const first = cs.push(xs[Number(order[0]!.slice(1))]!, draws[0]!);
      meanOfEstimates += first.mean / 200;
      if (r === 0) {
        order.slice(1).forEach((id, i) => cs.push(xs[Number(id.slice(1))]!, draws[i + 1]!));
        const last = cs.current();
        expect(last.lower).toBeLessThanOrEqual(truth);
        expect(last.upper).toBeGreaterThanOrEqual(truth);
        expect(last.upper - last.lower).toBeLessThan(0.02 + 1 / 40);
      }
    }
    // One draw's Horvitz–Thompson estimate, averaged over 200 seeded orders, is near the population mean.
    expect(Math.abs(meanOfEstimates - truth)).toBeLessThan(0.05);
    expect(() => cs0().push(0, { rel: 1, minRel: 1, maxRel: 1 })).toThrow(/population/);
  });
});

const cs0 = () => {
  const cs = new WeightedWorCs({ alpha: 0.05, population: 1, range: [0, 1] });
  cs.push(0, { rel: 1, minRel: 1, maxRel: 1 });
  return cs;
};

describe('the race’s weighted task order', () => {
  test('weights: none without two earlier scores that differ; more where earlier scores disagreed; mean 1, floor the uniform share', () => {
    expect(taskWeights([[], [1], [0]])).toBeNull();
    expect(
      taskWeights([
        [1, 1],
        [0, 0],
      ]),
    ).toBeNull();
    const w = taskWeights([
      [1, 1, 1, 1],
      [0, 1, 0, 1],
      [0, 0, 0, 0],
      [1, 0, 1, 1],
    ])!;
    expect(w[1]).toBeGreaterThan(w[3]!);
    expect(w[3]).toBeGreaterThan(w[0]!);
    expect(w[0]).toBeCloseTo(w[2]!, 12);
    expect(w.reduce((a, b) => a + b, 0) / w.length).toBeCloseTo(1, 12);
    expect(Math.min(...w)).toBeGreaterThan(UNIFORM_SHARE);
  });

  test('draws every task once, the same for the same seed, the first with probability ∝ its weight', () => {
    const weights = [1, 2, 3, 4];
    const a = weightedOrder(ids(4), weights, 's');
    expect(weightedOrder(ids(4), weights, 's')).toEqual(a);
    expect([...a.order].sort()).toEqual(ids(4));
    expect(a.draws[3]).toEqual({ rel: 1, minRel: 1, maxRel: 1 });
    const firsts = new Map<string, number>();
    for (let s = 0; s < 4000; s++) {
      const o = weightedOrder(ids(4), weights, `s${s}`);
      firsts.set(o.order[0]!, (firsts.get(o.order[0]!) ?? 0) + 1);
      expect(o.draws[0]!.rel).toBeCloseTo((4 * weights[Number(o.order[0]!.slice(1))]!) / 10, 12);
    }
    // Expected 400, 800, 1200, 1600; the binomial sd is at most 31.
    weights.forEach((w, i) => expect(Math.abs(firsts.get(`t${i}`)! - 400 * w)).toBeLessThan(130));
  });

  test('without a history the race is today’s: the seeded shuffle, decided by the uniform sequences', () => {
    const tasks = ids(30);
    const plan = racePlan(tasks, 'seed', taskWeights(tasks.map(() => [])));
    expect(plan).toEqual({ order: raceOrder(tasks, 'seed'), draws: null });
    const rng = seedrandom('today');
    const scores = [0.8, 0.4, 0.3].map((p) => tasks.map(() => (rng() < p ? 1 : 0)));
    const decisions = (rules: ConstructorParameters<typeof PairedRace>[0]) => {
      const race = new PairedRace(rules);
      return tasks.map((_, t) => {
        race.observe(scores.map((s) => s[t]!));
        return race.decide();
      });
    };
    const rules = { alpha: 0.05, nCandidates: 3, margin: 0, cs: 'hedged' as const, horizon: 10 };
    const today = decisions(rules);
    expect(decisions({ ...rules, ...(plan.draws ? { sampling: { draws: plan.draws } } : {}) })).toEqual(today);
    expect(today.some((d) => d.eliminated.length > 0)).toBe(true);
  });

  test('a weighted race eliminates the candidate best over all the tasks at most α of the time (seeded simulation)', () => {
    const rng = seedrandom('race-guarantee');
    const n = 40;
    const runs = 150;
    let bestOut = 0;
    for (let r = 0; r < runs; r++) {
      const shift = Array.from({ length: n }, () => (rng() < 0.5 ? 0.05 : 0.5));
      const scores: number[][] = [0.15, 0.1, 0.05].map((g) => shift.map((p) => (rng() < p + g ? 1 : 0)));
      const history = shift.map((p) => Array.from({ length: 6 }, () => (rng() < p ? 1 : 0)));
      const totals = scores.map((s) => s.reduce((a, b) => a + b, 0));
      const best = totals.indexOf(Math.max(...totals));
      if (totals.filter((x) => x === totals[best]).length > 1) continue; // a tie: no single best to lose
      const { order, draws } = weightedOrder(ids(n), taskWeights(history)!, `race-${r}`);
      const race = new PairedRace({ alpha: 0.1, nCandidates: 3, margin: 0, cs: 'hedged', horizon: 14, sampling: { draws } });
      for (const id of order) {
        if (race.alive().length < 2) break;
        race.observe(scores.map((s) => s[Number(id.slice(1))]!));
        race.decide();
      }
      if (!race.live[best]) bestOut++;
    }
    expect(bestOut / runs).toBeLessThanOrEqual(0.1);
  });
});
