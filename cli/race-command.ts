/** `vero race A B C …`: race candidates on the same tasks and stop when the answer is known (docs/race.md). */
import { Command } from 'commander';
import type { Client } from '@temporalio/client';
import { prepareRaceInput, raceResult, raceState, startRace } from '../client/race-client';
import { loadEvalConfig } from '../infra/eval-config-file';
import { ConfigError, ExitCode } from '../model/errors';
import type { RaceResult, RaceState } from '../model/race/types';
import { table } from './format';
import { configPath, ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { addOverrideOptions, HARBOR_RUN_OVERRIDES, overridesFrom } from './override-flags';
import { print, printJson } from './print';

interface RaceFlags extends ConnectionFlags {
  json?: boolean;
  margin: string;
  confidence: string;
  seed: string;
  batch?: number;
  onEliminated: string;
  maxCostUsd?: string;
  historyWeights?: boolean;
}

function numberFlag(name: string, v: string, lo: number, hi: number, open = false): number {
  const x = Number(v);
  const ok = Number.isFinite(x) && (open ? x > lo && x < hi : x >= lo && x <= hi);
  if (!ok)
    throw new ConfigError(`${name}: expected a number ${open ? `strictly between ${lo} and ${hi}` : `from ${lo} to ${hi}`}, got "${v}"`);
  return x;
}

const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;

function progressLine(s: RaceState): string {
  const live = s.candidates.filter((c) => c.status === 'racing').length;
  return `${s.phase}: ${s.decidedUpTo}/${s.order.length} shared task(s) decided, ${live} of ${s.candidates.length} racing, ${s.running} running, ${s.spent.taskRuns} task run(s)`;
}

function renderRace(r: RaceResult): string {
  const rows = r.candidates.map((c) => [
    c.candidateRef,
    c.status,
    String(c.tasksRun) + (c.reused ? ` (${c.reused} reused)` : ''),
    `${f3(c.mean)} [${f3(c.meanCs[0])}, ${f3(c.meanCs[1])}]`,
    c.vsLeader ? `${signed(c.vsLeader.meanDiff)} [${signed(c.vsLeader.lower)}, ${signed(c.vsLeader.upper)}]` : '(leader)',
    c.eliminatedAt !== null ? `after ${c.eliminatedAt}` : '',
    c.evalId,
  ]);
  const saved = r.fullEvaluation.trialRuns ? 1 - r.spent.trialRuns / r.fullEvaluation.trialRuns : 0;
  const cost =
    r.fullEvaluation.costUsd !== null
      ? `; cost $${r.spent.costUsd.toFixed(2)} of ≈ $${r.fullEvaluation.costUsd.toFixed(2)} (extrapolated from the mean per task)`
      : '';
  const drawn = r.sampling
    ? [
        `sampling  tasks drawn by ${r.sampling.earlierEvaluations} earlier evaluation(s)' disagreement, reweighted: means and sequences are of the mean over all ${r.order.length} tasks`,
      ]
    : [];
  return [
    table(['candidate', 'status', 'tasks', 'mean [CS]', 'vs leader [CS]', 'eliminated', 'evaluation'], rows),
    '',
    ...drawn,
    ...r.candidates.filter((c) => c.why).map((c) => `eliminated ${c.candidateRef} ${c.why}`),
    `stopped   ${r.stopReason} after ${r.decidedUpTo} of ${r.order.length} shared task(s) (seed ${r.seed}, confidence ${r.confidence}, margin ${r.margin})`,
    `winner    ${r.verdict}`,
    `spent     ${r.spent.taskRuns} task run(s), ${r.spent.trialRuns} trial run(s) against ${r.fullEvaluation.trialRuns} for every candidate on every task (${(100 * saved).toFixed(0)}% saved)${cost}`,
    `results   each candidate's tasks are an evaluation: vero results ID (partial unless it ran every task); vero compare ID1 ID2 uses the tasks both ran`,
  ].join('\n');
}

/** The race's settings from its flags (checked: a bad value is refused by its flag's name). */
function raceOptions(o: RaceFlags) {
  const onEliminated = o.onEliminated;
  if (onEliminated !== 'stop' && onEliminated !== 'finish')
    throw new ConfigError(`--on-eliminated: expected stop or finish, got "${onEliminated}"`);
  return {
    confidence: numberFlag('--confidence', o.confidence, 0.5, 1, true),
    margin: numberFlag('--margin', o.margin, 0, 1),
    seed: o.seed,
    onEliminated,
    ...(o.batch !== undefined ? { batchSize: o.batch } : {}),
    ...(o.maxCostUsd !== undefined ? { maxCostUsd: numberFlag('--max-cost-usd', o.maxCostUsd, 0, Infinity, true) } : {}),
    ...(o.historyWeights ? { historyWeights: true } : {}),
  } as const;
}

/** Prints the race's progress line on stderr whenever it changes (every 2 s); clear the timer to stop. */
function followRace(client: Client, raceId: string): ReturnType<typeof setInterval> {
  let last = '';
  return setInterval(() => {
    raceState(client, raceId)
      .then((s) => {
        const line = progressLine(s);
        if (line !== last) process.stderr.write(`${line}\n`);
        last = line;
      })
      .catch(() => undefined); // between workflow tasks, or done: the next tick asks again
  }, 2000);
}

export function registerRaceCommand(program: Command): void {
  withConnection(
    program
      .command('race <candidates...>')
      .description(
        'race candidates on the same tasks in one shared random order; eliminate each once it is worse than the leader at the chosen confidence (anytime-valid), and stop when the answer is known',
      )
      .option('--json', 'machine-readable output (vero schema race)')
      .option('--confidence <c>', 'confidence of every elimination, over all candidates together (union bound)', '0.95')
      .option('--margin <m>', 'stop once no racing candidate can be this much better than the leader (0: never)', '0')
      .option('--seed <s>', 'seed of the shared task order (the same seed, the same order)', 'vero-race')
      .option('--batch <n>', 'tasks per candidate between decisions (default: concurrency ÷ racing candidates)', parseIntFlag('--batch'))
      .option('--on-eliminated <what>', "an eliminated candidate's running tasks: stop | finish", 'stop')
      .option('--max-cost-usd <usd>', 'stop starting tasks once the race has spent this much (trials’ reported cost)')
      .option(
        '--history-weights',
        'draw tasks where earlier evaluations (same config) disagreed more often, and reweight: decisions about the mean over all the tasks (docs/race.md)',
      )
      .addHelpText(
        'after',
        `
Candidates are refs (tags, shas) of agent_repo in vero.yaml (-c, or found in this directory or a parent); they
are evaluated under that config, so a task already scored for a candidate under the same config (its
evaluation, or an earlier race) is reused, not paid again. Starting the same race again attaches to it.
What an elimination guarantees and what it does not: docs/race.md.
Exit codes: 0 the race finished (whatever the winner); 1 the race failed; 2 bad input; 3 no server.`,
      ),
  ).action(async (refs: string[], o: RaceFlags) => {
    const file = configPath(o);
    if (!file) throw new ConfigError('-c: no vero.yaml here or in a parent directory; give one with -c');
    const options = raceOptions(o);
    const overlay = overridesFrom(o, HARBOR_RUN_OVERRIDES); // Harbor's own flags (-a, -m, -i, -l, -k …) over vero.yaml
    const input = await prepareRaceInput(loadEvalConfig(file, overlay.overrides, overlay.flags), refs, options);
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json);
    try {
      const mode = await startRace(client, input, conn.taskQueue);
      if (!o.json) process.stderr.write(`${mode} ${input.raceId}\n`);
      const timer = o.json ? null : followRace(client, input.raceId);
      const r = await raceResult(client, input.raceId).finally(() => timer && clearInterval(timer));
      if (o.json) printJson(r);
      else print(renderRace(r));
    } finally {
      await client.connection.close();
    }
    process.exitCode = ExitCode.ok;
  });
  addOverrideOptions(program.commands.find((c) => c.name() === 'race')!, HARBOR_RUN_OVERRIDES);
}
