/**
 * Racing against full evaluation, on a stand-in model of known per-task success probabilities (seeded).
 *
 * 200 tasks; K = 4 and 8 candidates whose true pass rates are spaced `gap` apart (0.03 to 0.15); each task has
 * a difficulty (a logit shift, normal with sd 1.5) shared by every candidate, so per-task outcomes are
 * correlated as on a real benchmark. Each replication draws the tasks and every candidate's outcome on every
 * task, then:
 *   - race: the decision logic of the race workflow (model/race/decision.ts, the same code), run in-process
 *     in the shared order, deciding after each batch (concurrency 8 ÷ live candidates tasks per candidate);
 *   - full: every candidate on every task; the winner is the highest mean; `vero compare` of the winner
 *     against the runner-up (model/race/paired-comparison.ts, a paired bootstrap, 1,000 resamples) says whether
 *     it is resolved.
 *
 * With `--history H` (H ≥ 1) each replication also draws H earlier candidates of the same model on the same tasks
 * (pass rates uniform in [0.4, 0.8], the same per-task difficulties; their own seeded stream, so the tasks and the
 * race's outcomes are those of the run without it) and runs, besides today's race, the weighted race: tasks drawn
 * by how much the earlier candidates disagreed on them (model/race/sampling.ts) and reweighted
 * (model/race/confidence-sequence.ts, WeightedWorCs), printed side by side with today's race and full evaluation.
 *
 * Two more columns: the oracle race (`oracleRace`: Wald's SPRT for each candidate against the true best, knowing
 * the laws; model/race/oracle-sprt.ts) and the exact bound on what any valid race can save (model/race/oracle-bound.ts).
 *
 *   npm run build && node dist/bench/race.js [--reps 200] [--seed bench] [--cs hedged|eb] [--history 10] [--k 4,8] [--gaps 0.03,0.05,0.1,0.15]
 */
import seedrandom from 'seedrandom';
import { comparePaired } from '../model/race/paired-comparison';
import type { CsKind } from '../model/race/confidence-sequence';
import { PairedRace, raceHorizon, type RaceRules } from '../model/race/decision';
import { taskWeights, weightedOrder } from '../model/race/sampling';
import { savingBound } from '../model/race/oracle-bound';
import { type DifferenceLaw, differenceLaw, OracleSprt } from '../model/race/oracle-sprt';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const REPS = Number(arg('--reps', '200'));
const SEED = arg('--seed', 'bench');
const N = 200;
/** The pairs' sequence: the race workflow's (hedged capital, tuned for a third of the tasks), or PrPl-EB. */
const CS = arg('--cs', 'hedged') as CsKind;
const HISTORY = Number(arg('--history', '0'));
const KS = arg('--k', '4,8').split(',').map(Number);
const GAPS = arg('--gaps', '0.03,0.05,0.1,0.15').split(',').map(Number);
const CONCURRENCY = 8;
const TOP = 0.7;

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const logit = (p: number) => Math.log(p / (1 - p));

function normal(rng: () => number): number {
  const u = Math.max(rng(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng());
}

interface RaceOutcome {
  taskRuns: number;
  bestEliminated: boolean;
  winnerIsBest: boolean;
  /** The candidate with the highest mean over all the tasks (these outcomes) was eliminated (no tie). */
  fullBestEliminated: boolean;
}

interface Outcome {
  race: RaceOutcome;
  weighted: RaceOutcome | null;
  /** The same sequences in a uniform order (every weight 1): what the finite-population target alone saves. */
  uniformFinite: RaceOutcome | null;
  fullWinnerIsBest: boolean;
  compareResolved: boolean;
  oracle: RaceOutcome;
  /** Each other candidate's law of its difference to the true best on a task drawn at random. */
  laws: DifferenceLaw[];
}

/**
 * The oracle race (model/race/oracle-sprt.ts): it knows which candidate is best and each other's law of the difference
 * to it, and eliminates candidate j once Wald's SPRT of that law against the closest law where j is as good as the
 * best reaches 1/α. Each such test is valid at level α for "j is best" (only one such hypothesis is true, so no
 * union bound); the same batches and accounting as `runRace`.
 */
function oracleRace(scores: number[][], laws: readonly DifferenceLaw[]): RaceOutcome {
  const tests = laws.map((law) => new OracleSprt(law, 0, 0.05));
  const live = scores.map(() => true);
  const alive = () => live.filter(Boolean).length;
  let taskRuns = 0;
  for (let t = 0; t < N && alive() > 1; ) {
    const batch = Math.max(1, Math.floor(CONCURRENCY / alive()));
    const stops: number[] = [];
    for (let i = 0; i < batch && t < N; i++, t++) {
      taskRuns += alive();
      for (let j = 1; j < scores.length; j++) if (live[j] && tests[j - 1]!.observe(scores[j]![t]! - scores[0]![t]!)) stops.push(j);
    }
    for (const j of stops) live[j] = false;
  }
  return { taskRuns, bestEliminated: false, winnerIsBest: true, fullBestEliminated: false };
}

/** One race on outcomes already in the race's order, a decision after each batch, as the workflow decides. */
function runRace(scores: number[][], sampling: RaceRules['sampling']): RaceOutcome {
  const k = scores.length;
  const totals = scores.map((s) => s.reduce((a, b) => a + b, 0));
  const fullBest = totals.indexOf(Math.max(...totals));
  const tie = totals.filter((x) => x === totals[fullBest]).length > 1;
  const horizon = CS === 'hedged' ? raceHorizon(N) : undefined;
  const race = new PairedRace({ alpha: 0.05, nCandidates: k, margin: 0, cs: CS, horizon, ...(sampling ? { sampling } : {}) });
  let taskRuns = 0;
  let t = 0;
  while (t < N && race.alive().length > 1) {
    const batch = Math.max(1, Math.floor(CONCURRENCY / race.alive().length));
    for (let i = 0; i < batch && t < N; i++, t++) {
      taskRuns += race.alive().length;
      race.observe(scores.map((s) => s[t]!));
    }
    race.decide();
  }
  const alive = race.alive();
  const est = race.estimatedMeans();
  const winner = alive.reduce((b, c) => (est[c]! > est[b]! ? c : b), alive[0]!);
  return { taskRuns, bestEliminated: !race.live[0], winnerIsBest: winner === 0, fullBestEliminated: !tie && !race.live[fullBest]! };
}

/** The weighted race: H earlier candidates' outcomes weight the tasks; the candidates' outcomes in the drawn order. */
function weightedRace(scores: number[][], shifts: number[], historyRng: () => number): [RaceOutcome, RaceOutcome] {
  const earlier = Array.from({ length: HISTORY }, () => 0.4 + 0.4 * historyRng());
  const history = shifts.map((s) => earlier.map((p) => (historyRng() < sigmoid(logit(p) + s) ? 1 : 0)));
  const ids = shifts.map((_, i) => String(i));
  const seed = `${SEED}:${historyRng()}`;
  const run = (weights: number[]) => {
    const { order, draws } = weightedOrder(ids, weights, seed);
    return runRace(
      scores.map((row) => order.map((id) => row[Number(id)]!)),
      { draws },
    );
  };
  const uniform = run(ids.map(() => 1));
  const weights = taskWeights(history);
  return [weights ? run(weights) : runRace(scores, undefined), uniform];
}

function replicate(rates: number[], rng: () => number, historyRng: () => number): Outcome {
  const shifts = Array.from({ length: N }, () => 1.5 * normal(rng));
  const truth = rates.map((p) => shifts.map((s) => sigmoid(logit(p) + s)));
  const scores: number[][] = truth.map((qs) => qs.map((q) => (rng() < q ? 1 : 0)));
  const laws = truth.slice(1).map((qs) => differenceLaw(qs, truth[0]!));
  // Today's race: tasks in order (they are exchangeable draws already).
  const race = runRace(scores, undefined);
  const [weighted, uniformFinite] = HISTORY > 0 ? weightedRace(scores, shifts, historyRng) : [null, null];
  const meanOf = (c: number, n: number) => scores[c]!.slice(0, n).reduce((a, b) => a + b, 0) / n;
  const full = scores.map((_, c) => meanOf(c, N));
  const ranked = full.map((m, c) => [m, c] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const [w, r] = [ranked[0]![1], ranked[1]![1]];
  const byTask = (c: number) => new Map(scores[c]!.map((s, i) => [`t${i}`, s]));
  const cmp = comparePaired(byTask(r), byTask(w), { resamples: 1000, seed: `${SEED}` });
  return {
    race,
    weighted,
    uniformFinite,
    fullWinnerIsBest: w === 0,
    compareResolved: cmp.verdict === 'B better',
    oracle: oracleRace(scores, laws),
    laws,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function header(): string[] {
  const today = ['trial-runs saved', 'best eliminated', 'race winner = best'];
  const weighted =
    HISTORY > 0
      ? [
          'weighted: saved',
          'weighted: best elim.',
          'weighted: winner = best',
          'weighted: full best elim.',
          'uniform-finite: saved',
          'u-f: best elim.',
        ]
      : [];
  return ['K', 'gap', 'rates', ...today, ...weighted, 'full winner = best', 'compare resolves', 'oracle: saved', 'bound: saved'];
}

function row(k: number, gap: number): string[] {
  const rng = seedrandom(`${SEED}:${k}:${gap}`);
  const historyRng = seedrandom(`${SEED}:${k}:${gap}:history`);
  const rates = Array.from({ length: k }, (_, i) => Math.max(0.02, TOP - i * gap));
  const outs = Array.from({ length: REPS }, () => replicate(rates, rng, historyRng));
  const mean = (f: (o: Outcome) => number) => outs.reduce((a, o) => a + f(o), 0) / outs.length;
  const cells = (pick: (o: Outcome) => RaceOutcome) => [
    pct(1 - mean((o) => pick(o).taskRuns) / (k * N)),
    pct(mean((o) => +pick(o).bestEliminated)),
    pct(mean((o) => +pick(o).winnerIsBest)),
  ];
  return [
    String(k),
    gap.toFixed(2),
    `${rates[0]!.toFixed(2)}…${rates[k - 1]!.toFixed(2)}`,
    ...cells((o) => o.race),
    ...(HISTORY > 0
      ? [
          ...cells((o) => o.weighted!),
          pct(mean((o) => +o.weighted!.fullBestEliminated)),
          pct(1 - mean((o) => o.uniformFinite!.taskRuns) / (k * N)),
          pct(mean((o) => +o.uniformFinite!.bestEliminated)),
        ]
      : []),
    pct(mean((o) => +o.fullWinnerIsBest)),
    pct(mean((o) => +o.compareResolved)),
    pct(1 - mean((o) => o.oracle.taskRuns) / (k * N)),
    pct(
      raceBound(
        outs.map((o) => o.laws),
        k,
      ),
    ),
  ];
}

/**
 * The most any valid race can save in expectation (model/race/oracle-bound.ts, a decision after every task): candidate
 * j ≠ best saves at most the bound of a level-α test of "j is best" on its mean law over the replications, and the
 * best runs until the last other is out, so it saves at most the least of theirs.
 */
function raceBound(lawsByRep: readonly DifferenceLaw[][], k: number): number {
  const meanLaw = (j: number): DifferenceLaw => ({
    plus: lawsByRep.reduce((a, l) => a + l[j]!.plus, 0) / lawsByRep.length,
    minus: lawsByRep.reduce((a, l) => a + l[j]!.minus, 0) / lawsByRep.length,
  });
  const saved = Array.from({ length: k - 1 }, (_, j) => savingBound(meanLaw(j), 0, 0.05, N, 1));
  return (saved.reduce((a, b) => a + b, 0) + Math.min(...saved)) / (k * N);
}

function main(): void {
  const started = Date.now();
  process.stdout.write(
    `race vs full evaluation: ${N} tasks, ${REPS} replications per setting, seed "${SEED}", 95% confidence, margin 0, sequence ${CS === 'hedged' ? `hedged capital tuned for ${raceHorizon(N)} tasks` : 'PrPl-EB'}\n` +
      `the race replications run the race workflow's decision code (model/race/decision.ts) in-process on simulated outcomes,\n` +
      `not the workflow itself; full evaluation = every candidate on every task + vero compare (winner vs runner-up)\n` +
      (HISTORY > 0 ? `weighted: tasks drawn by ${HISTORY} earlier candidates' disagreement (model/race/sampling.ts), reweighted\n` : '') +
      '\n',
  );
  const rows = KS.flatMap((k) => GAPS.map((gap) => row(k, gap)));
  const head = header();
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(`${[line(head), ...rows.map(line)].join('\n')}\n\n${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main();
