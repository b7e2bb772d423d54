/**
 * Early stop against the incumbent, against full evaluation, on a stand-in model of known per-case success
 * probabilities (seeded), at the model level as bench/race.ts: the decisions are model/race/early-stop.ts's code.
 *
 * An optimizer's stream of 40 candidates on a 100-case validation partition, each case with a difficulty (a logit
 * shift, normal with sd 1.5) shared by every candidate. The incumbent starts at a pass rate of 0.40; each candidate
 * is, with probability 0.8, worse than the current incumbent's true rate by a gap uniform in [0.02, 0.20], else
 * better by one uniform in [0.03, 0.10]. A candidate that ran every case and whose mean beats the incumbent's
 * becomes the incumbent (the selection rule); a stopped one never does.
 *   - full: every candidate on every case (today);
 *   - early stop: cases in a seeded random order, paired with the incumbent's scores, stopped once the
 *     sequence's upper end is below the margin, in the sidecar's waves (sidecar/early-stop-run.ts): a decision
 *     inside a wave still pays the whole wave (`--wave 8`, `running: finish` at max_concurrency 8; `--wave 1`,
 *     `running: stop`).
 *
 *   npm run build && node dist/bench/early-stop.js [--reps 200] [--seed bench] [--margins 0,0.03] [--confidence 0.95]
 *     [--wave 8] [--targets distribution,cases] [--history 10] [--oracle-thresholds 1]
 *     [--bound-sample 480] [--bound-only]
 *
 * Beside the real rule, two more settings on the same draws and waves:
 *   - oracle: the best a valid sequential test could do (model/race/oracle-sprt.ts): it knows each candidate's true
 *     per-case rates, so the law of the paired difference, and runs Wald's SPRT of that law against the closest law
 *     of the null. Its type-I error is checked on the boundary (cases drawn from that null law).
 *   - history-weighted: the `cases` target with the cases drawn by how much 10 earlier candidates disagreed on them
 *     (model/race/sampling.ts, as `vero race --history-weights`) and reweighted (`WeightedWorCs`).
 */
import seedrandom from 'seedrandom';
import { WeightedWorCs } from '../model/race/confidence-sequence';
import { EarlyStop, type EarlyStopTarget } from '../model/race/early-stop';
import { meanSavingBound } from '../model/race/oracle-bound';
import { closestNullLaw, type DifferenceLaw, differenceLaw, drawDifference, OracleSprt } from '../model/race/oracle-sprt';
import { taskWeights, weightedOrder } from '../model/race/sampling';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const REPS = Number(arg('--reps', '200'));
const SEED = arg('--seed', 'bench');
const MARGINS = arg('--margins', '0,0.03').split(',').map(Number);
const TARGETS = arg('--targets', 'distribution,cases').split(',') as EarlyStopTarget[];
const CONFIDENCE = Number(arg('--confidence', '0.95'));
const CASES = 100;
const STREAM = 40;
/** The sidecar's waves: `running: finish` runs max_concurrency (8) cases at a time, `running: stop` one. */
const WAVE = Number(arg('--wave', '8'));
/** Earlier candidates per stream whose scores weight the `cases` target's order (0: no weighted setting). */
const HISTORY = Number(arg('--history', '10'));
/** The oracle's thresholds, as multiples of 1/α (1: Ville's, valid at every time; below 1: tuned to 100 cases). */
const ORACLE_THRESHOLDS = arg('--oracle-thresholds', '1').split(',').map(Number);
/** Candidates' laws (a seeded sample) whose exact saving bound is computed (model/race/oracle-bound.ts). */
const BOUND_SAMPLE = Number(arg('--bound-sample', '480'));
/** Only the oracle at threshold 1/α, whose streams give the bound's laws (the full evaluation row stays). */
const BOUND_ONLY = process.argv.includes('--bound-only');

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const logit = (p: number) => Math.log(p / (1 - p));
const clampRate = (p: number) => Math.min(0.98, Math.max(0.02, p));
const normal = (rng: () => number) => Math.sqrt(-2 * Math.log(Math.max(rng(), 1e-12))) * Math.cos(2 * Math.PI * rng());
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

interface StreamOutcome {
  caseRuns: number;
  better: number;
  betterStopped: number;
  /** Stopped although its full evaluation would have beaten the incumbent's mean by ≥ the margin. */
  wouldHaveWon: number;
  stopped: number;
  /** The final incumbent's true rate. */
  finalRate: number;
}

/**
 * How a setting decides: the real rule (model/race/early-stop.ts), the oracle (model/race/oracle-sprt.ts: it knows the
 * candidate's true per-case rates), or the `cases` target in a history-weighted order (model/race/sampling.ts).
 */
type Decider =
  | { kind: 'rule'; margin: number; target: EarlyStopTarget }
  | { kind: 'oracle'; margin: number; threshold: number }
  | { kind: 'weighted'; margin: number };

/** One candidate's evaluation as the setting decides it: the number of cases run when it stopped, or null. */
interface Evaluation {
  scores: number[];
  incScores: number[];
  /** The candidate's true success probability on each case. */
  rates: number[];
  /** Earlier candidates' scores on each case (the weighted order's history). */
  history: number[][];
}

function stoppedAfter(d: Decider, e: Evaluation, seed: string): number | null {
  const diffs = e.scores.map((s, i) => s - e.incScores[i]!);
  if (d.kind === 'oracle') {
    const test = new OracleSprt(differenceLaw(e.rates, e.incScores), d.margin, 1 - CONFIDENCE, d.threshold);
    const at = diffs.findIndex((x) => test.observe(x));
    return at >= 0 && at + 1 < CASES ? at + 1 : null;
  }
  if (d.kind === 'weighted') return weightedCasesStop(diffs, e.history, d.margin, seed);
  // The cases are exchangeable draws already: their index order is a random order.
  const test = new EarlyStop(CASES, { confidence: CONFIDENCE, margin: d.margin, minCases: 1, target: d.target });
  const at = diffs.findIndex((_, i) => test.observe(e.scores[i]!, e.incScores[i]!));
  return at >= 0 ? at + 1 : null;
}

/**
 * The `cases` target in a weighted order: cases drawn by the earlier candidates' disagreement (`taskWeights`,
 * `weightedOrder`), the same one-sided without-replacement sequence as model/race/early-stop.ts with the draws' weights.
 */
function weightedCasesStop(diffs: number[], history: number[][], margin: number, seed: string): number | null {
  const weights = taskWeights(history) ?? diffs.map(() => 1);
  const { order, draws } = weightedOrder(
    diffs.map((_, i) => String(i)),
    weights,
    seed,
  );
  const alpha = 1 - CONFIDENCE;
  const cs = new WeightedWorCs({ alpha: 2 * alpha, horizon: CASES / 2, population: CASES, range: [-1, 1] });
  for (let t = 0; t < CASES - 1; t++) {
    const p = cs.push(diffs[Number(order[t])]!, draws[t]!);
    if (p.upper < margin) return t + 1;
  }
  return null;
}

/** Earlier candidates' scores on the cases (rates uniform in [0.3, 0.7], the same difficulties, their own stream). */
function historyOf(shifts: number[], historyRng: () => number): number[][] {
  const rates = Array.from({ length: HISTORY }, () => 0.3 + 0.4 * historyRng());
  return shifts.map((s) => rates.map((p) => (historyRng() < sigmoid(logit(p) + s) ? 1 : 0)));
}

/** The oracle's streams' laws of the difference: the truly better candidates' and the worse ones' (by the true rate). */
interface OracleLaws {
  better: DifferenceLaw[];
  worse: DifferenceLaw[];
}

/** One stream: `decider` null runs every case (full evaluation). */
function stream(rng: () => number, historyRng: () => number, decider: Decider | null, laws: OracleLaws): StreamOutcome {
  const shifts = Array.from({ length: CASES }, () => 1.5 * normal(rng));
  const history = HISTORY > 0 ? historyOf(shifts, historyRng) : [];
  const truth = (rate: number) => shifts.map((s) => sigmoid(logit(rate) + s));
  const draw = (rate: number) => truth(rate).map((q) => (rng() < q ? 1 : 0));
  let inc = { rate: 0.4, scores: draw(0.4) };
  const out: StreamOutcome = { caseRuns: 0, better: 0, betterStopped: 0, wouldHaveWon: 0, stopped: 0, finalRate: 0 };
  for (let k = 0; k < STREAM; k++) {
    const better = rng() < 0.2;
    const rate = clampRate(better ? inc.rate + 0.03 + 0.07 * rng() : inc.rate - 0.02 - 0.18 * rng());
    const scores = draw(rate);
    const evaluation = { scores, incScores: inc.scores, rates: truth(rate), history };
    if (decider?.kind === 'oracle') (better ? laws.better : laws.worse).push(differenceLaw(evaluation.rates, inc.scores));
    const stoppedAt = decider ? stoppedAfter(decider, evaluation, `${SEED}:${historyRng()}`) : null;
    let runs = CASES;
    if (stoppedAt !== null) {
      runs = Math.min(CASES, Math.ceil(stoppedAt / WAVE) * WAVE);
      out.stopped++;
      if (better) out.betterStopped++;
      if (mean(scores) - mean(inc.scores) >= decider!.margin) out.wouldHaveWon++;
    }
    if (better) out.better++;
    out.caseRuns += runs;
    if (runs === CASES && mean(scores) > mean(inc.scores)) inc = { rate, scores };
  }
  out.finalRate = inc.rate;
  return out;
}

/**
 * The oracle's own type-I error: for each worse candidate's law Q (from the oracle's streams), 100 cases drawn
 * from p*, the null's law closest to Q (E[D] = margin, the boundary), tested with Q's bet. The share stopped.
 */
function oracleTypeOne(laws: readonly DifferenceLaw[], margin: number, threshold: number): number {
  const rng = seedrandom(`${SEED}:oracle-type-one:${margin}`);
  let stopped = 0;
  for (const law of laws) {
    const nullLaw = closestNullLaw(law, margin);
    const test = new OracleSprt(law, margin, 1 - CONFIDENCE, threshold);
    for (let t = 0; t < CASES - 1 && !test.observe(drawDifference(nullLaw, rng())); t++);
    if (test.stoppedAt !== null) stopped++;
  }
  return stopped / Math.max(1, laws.length);
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function settings(): { label: string; decider: Decider | null }[] {
  const list: { label: string; decider: Decider | null }[] = [{ label: 'full evaluation (today)', decider: null }];
  for (const margin of MARGINS) {
    for (const target of TARGETS)
      list.push({ label: `early stop, margin ${margin}, ${target}`, decider: { kind: 'rule', margin, target } });
    if (HISTORY > 0) list.push({ label: `early stop, margin ${margin}, cases, history-weighted`, decider: { kind: 'weighted', margin } });
    for (const scale of ORACLE_THRESHOLDS)
      list.push({
        label: `oracle SPRT, margin ${margin}${scale === 1 ? '' : `, threshold ${scale}/α`}`,
        decider: { kind: 'oracle', margin, threshold: scale / (1 - CONFIDENCE) },
      });
  }
  return list;
}

function settingRow(label: string, decider: Decider | null): string[] {
  const rng = seedrandom(`${SEED}:early-stop`);
  const historyRng = seedrandom(`${SEED}:early-stop:history`);
  const laws: OracleLaws = { better: [], worse: [] };
  const outs = Array.from({ length: REPS }, () => stream(rng, historyRng, decider, laws));
  const sum = (f: (o: StreamOutcome) => number) => outs.reduce((a, o) => a + f(o), 0);
  const spent = sum((o) => o.caseRuns) / (REPS * STREAM * CASES);
  const typeOne = decider?.kind === 'oracle' ? pct(oracleTypeOne(laws.worse, decider.margin, decider.threshold)) : '';
  if (decider?.kind === 'oracle' && decider.threshold === 1 / (1 - CONFIDENCE))
    boundLines.push(boundLine([...laws.better, ...laws.worse], decider.margin));
  return [
    label,
    pct(spent),
    pct(1 - spent),
    pct(sum((o) => o.stopped) / (REPS * STREAM)),
    pct(sum((o) => o.betterStopped) / sum((o) => o.better)),
    pct(sum((o) => o.wouldHaveWon) / (REPS * STREAM)),
    (sum((o) => o.finalRate) / REPS).toFixed(3),
    typeOne,
  ];
}

const boundLines: string[] = [];

/**
 * The exact upper bound on any valid test's expected saving (model/race/oracle-bound.ts) over a seeded sample of every
 * candidate's law: a better one counts with its own law's bound (α if in the null, more if not: it is compared with
 * the incumbent's selection-inflated scores). The laws are i.i.d. laws of the difference (Q, the mean over the cases).
 */
function boundLine(laws: readonly DifferenceLaw[], margin: number): string {
  const rng = seedrandom(`${SEED}:bound-sample:${margin}`);
  const sample = Array.from({ length: Math.min(BOUND_SAMPLE, laws.length) }, () => laws[Math.floor(rng() * laws.length)]!);
  const saved = sample.map((law) => meanSavingBound([law], margin, 1 - CONFIDENCE, CASES, WAVE));
  const m = mean(saved);
  const se = Math.sqrt(mean(saved.map((x) => (x - m) ** 2)) / saved.length);
  const inNull = sample.filter((law) => law.plus - law.minus >= margin).length;
  return (
    `margin ${margin}: no valid test saves more than ${pct(m)} ± ${pct(se)} of the stream's budget in expectation ` +
    `(${sample.length} candidates' laws sampled, ${inNull} of them in the null); ` +
    `the oracle SPRT on i.i.d. draws from the same laws saves ${pct(oracleIidSaving(sample, margin))}`
  );
}

/**
 * The oracle SPRT's saving when each case's difference is an i.i.d. draw from the candidate's law Q (the process
 * the bound is exact for), to set beside its saving on the streams' fixed population of cases. 20 runs per law.
 */
function oracleIidSaving(laws: readonly DifferenceLaw[], margin: number): number {
  const rng = seedrandom(`${SEED}:oracle-iid:${margin}`);
  let saved = 0;
  for (const law of laws)
    for (let r = 0; r < 20; r++) {
      const test = new OracleSprt(law, margin, 1 - CONFIDENCE, 1 / (1 - CONFIDENCE));
      for (let t = 0; t < CASES - 1 && !test.observe(drawDifference(law, rng())); t++);
      const at = test.stoppedAt;
      if (at !== null && at < CASES) saved += CASES - Math.min(CASES, Math.ceil(at / WAVE) * WAVE);
    }
  return saved / (20 * CASES * Math.max(1, laws.length));
}

function main(): void {
  const started = Date.now();
  process.stdout.write(
    `early stop vs full evaluation: ${STREAM} candidates × ${CASES} cases, ${REPS} replications, seed "${SEED}", ${100 * CONFIDENCE}% confidence\n` +
      `decisions by model/race/early-stop.ts in-process on simulated outcomes; in waves of ${WAVE} case(s) (a wave started is paid)\n` +
      `oracle: Wald's SPRT of the true alternative against its closest null law (model/race/oracle-sprt.ts), same draws and waves;\n` +
      `  its type-I error: 100 cases drawn from that null law per worse candidate${HISTORY > 0 ? `\nhistory-weighted: cases drawn by ${HISTORY} earlier candidates' disagreement` : ''}\n\n`,
  );
  const head = [
    'setting',
    'budget spent',
    'saved',
    'stopped',
    'better stopped',
    'stopped, full would win',
    'final incumbent rate',
    'oracle type-I at the boundary',
  ];
  const chosen = settings().filter(
    ({ decider }) => !BOUND_ONLY || !decider || (decider.kind === 'oracle' && decider.threshold === 1 / (1 - CONFIDENCE)),
  );
  const rows = chosen.map(({ label, decider }) => settingRow(label, decider));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(`${[line(head), ...rows.map(line)].join('\n')}\n\n`);
  process.stdout.write(
    `upper bound, any valid test that knows each law (model/race/oracle-bound.ts), waves of ${WAVE}:\n${boundLines.join('\n')}\n`,
  );
  process.stdout.write(`\n${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main();
