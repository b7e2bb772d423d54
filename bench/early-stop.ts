/**
 * Early stop against the incumbent, against full evaluation, on a stand-in model of known per-case success
 * probabilities (seeded), at the model level as bench/race.ts: the decisions are model/early-stop.ts's code.
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
 *     [--wave 8] [--targets distribution,cases]
 */
import seedrandom from 'seedrandom';
import { EarlyStop, type EarlyStopTarget } from '../model/early-stop';

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

/** One stream: `early` null runs every case (full evaluation). */
function stream(rng: () => number, early: { margin: number; target: EarlyStopTarget } | null): StreamOutcome {
  const shifts = Array.from({ length: CASES }, () => 1.5 * normal(rng));
  const draw = (rate: number) => shifts.map((s) => (rng() < sigmoid(logit(rate) + s) ? 1 : 0));
  let inc = { rate: 0.4, scores: draw(0.4) };
  const out: StreamOutcome = { caseRuns: 0, better: 0, betterStopped: 0, wouldHaveWon: 0, stopped: 0, finalRate: 0 };
  for (let k = 0; k < STREAM; k++) {
    const better = rng() < 0.2;
    const rate = clampRate(better ? inc.rate + 0.03 + 0.07 * rng() : inc.rate - 0.02 - 0.18 * rng());
    const scores = draw(rate);
    // The cases are exchangeable draws already: their index order is a random order.
    const order = Array.from({ length: CASES }, (_, i) => i);
    let runs = CASES;
    if (early) {
      const test = new EarlyStop(CASES, { confidence: CONFIDENCE, margin: early.margin, minCases: 1, target: early.target });
      const stoppedAt = order.findIndex((i) => test.observe(scores[i]!, inc.scores[i]!));
      if (stoppedAt >= 0) {
        runs = Math.min(CASES, Math.ceil((stoppedAt + 1) / WAVE) * WAVE);
        out.stopped++;
        if (better) out.betterStopped++;
        if (mean(scores) - mean(inc.scores) >= early.margin) out.wouldHaveWon++;
      }
    }
    if (better) out.better++;
    out.caseRuns += runs;
    if (runs === CASES && mean(scores) > mean(inc.scores)) inc = { rate, scores };
  }
  out.finalRate = inc.rate;
  return out;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function main(): void {
  const started = Date.now();
  process.stdout.write(
    `early stop vs full evaluation: ${STREAM} candidates × ${CASES} cases, ${REPS} replications, seed "${SEED}", ${100 * CONFIDENCE}% confidence\n` +
      `decisions by model/early-stop.ts in-process on simulated outcomes; in waves of ${WAVE} case(s) (a wave started is paid)\n\n`,
  );
  const settings: { label: string; early: { margin: number; target: EarlyStopTarget } | null }[] = [
    { label: 'full evaluation (today)', early: null },
    ...MARGINS.flatMap((margin) =>
      TARGETS.map((target) => ({
        label: `early stop, margin ${margin}, ${target}`,
        early: { margin, target },
      })),
    ),
  ];
  const head = ['setting', 'budget spent', 'saved', 'stopped', 'better stopped', 'stopped, full would win', 'final incumbent rate'];
  const rows = settings.map(({ label, early }) => {
    const rng = seedrandom(`${SEED}:early-stop`);
    const outs = Array.from({ length: REPS }, () => stream(rng, early));
    const sum = (f: (o: StreamOutcome) => number) => outs.reduce((a, o) => a + f(o), 0);
    const spent = sum((o) => o.caseRuns) / (REPS * STREAM * CASES);
    return [
      label,
      pct(spent),
      pct(1 - spent),
      pct(sum((o) => o.stopped) / (REPS * STREAM)),
      pct(sum((o) => o.betterStopped) / sum((o) => o.better)),
      pct(sum((o) => o.wouldHaveWon) / (REPS * STREAM)),
      (sum((o) => o.finalRate) / REPS).toFixed(3),
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(`${[line(head), ...rows.map(line)].join('\n')}\n\n${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main();
