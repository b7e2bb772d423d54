/**
 * Where a trial's time goes, from Harbor's own phase timings in each trial's result.json: environment setup, agent
 * setup, agent, verifier, and the time after the verifier until the trial finished (the environment's teardown),
 * summed over every trial found below a directory. For bench/real-harbor-overhead.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

interface Span {
  started_at: string | null;
  finished_at: string | null;
}
interface TrialTimes {
  trial_name?: string;
  started_at?: string | null;
  finished_at?: string | null;
  environment_setup?: Span | null;
  agent_setup?: Span | null;
  agent_execution?: Span | null;
  verifier?: Span | null;
}

export const PHASES = ['environment setup', 'agent setup', 'agent', 'verifier', 'after the verifier'] as const;
export type PhaseSums = Record<(typeof PHASES)[number], number> & { trials: number };

const sec = (a: string | null | undefined, b: string | null | undefined) => (a && b ? (Date.parse(b) - Date.parse(a)) / 1000 : 0);
const spanSec = (s: Span | null | undefined) => sec(s?.started_at, s?.finished_at);

/** Every trial result.json below `dir` (a trial's has a `trial_name`). */
function trialResults(dir: string, depth = 0): TrialTimes[] {
  if (depth > 8 || !fs.existsSync(dir)) return [];
  const out: TrialTimes[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...trialResults(p, depth + 1));
    else if (e.name === 'result.json') {
      try {
        const r = JSON.parse(fs.readFileSync(p, 'utf8')) as TrialTimes;
        if (r.trial_name) out.push(r);
      } catch {
        /* not a result */
      }
    }
  }
  return out;
}

/** Harbor's phase timings summed over the trials below `dir`. */
export function phaseSums(dir: string): PhaseSums {
  const sums: PhaseSums = { 'environment setup': 0, 'agent setup': 0, agent: 0, verifier: 0, 'after the verifier': 0, trials: 0 };
  for (const t of trialResults(dir)) {
    sums.trials++;
    sums['environment setup'] += spanSec(t.environment_setup);
    sums['agent setup'] += spanSec(t.agent_setup);
    sums.agent += spanSec(t.agent_execution);
    sums.verifier += spanSec(t.verifier);
    const lastPhaseEnd = t.verifier?.finished_at ?? t.agent_execution?.finished_at ?? t.environment_setup?.finished_at;
    sums['after the verifier'] += sec(lastPhaseEnd, t.finished_at);
  }
  return sums;
}

/** `environment setup 41.6 s (2.6 s/trial), …` */
export function phaseText(s: PhaseSums): string {
  const n = Math.max(1, s.trials);
  return `${s.trials} trials: ${PHASES.map((p) => `${p} ${s[p].toFixed(1)} s (${(s[p] / n).toFixed(1)} s/trial)`).join(', ')}`;
}

/** The agents' own work perfectly scheduled on `lanes`: no schedule beats the longest task or the work spread evenly. */
export function floorSec(durations: number[], lanes: number): number {
  return Math.max(Math.max(...durations), durations.reduce((a, b) => a + b, 0) / lanes);
}
