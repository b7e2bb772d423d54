/** `vero compare A B`: is candidate B better than A, on the tasks both evaluated (model/race/paired-comparison.ts). */
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { prepareEvalInput } from '../client/eval-input';
import { withTasks } from '../client/eval-results';
import { loadEvalConfig } from '../infra/eval-config-file';
import { ConfigError, ExitCode } from '../model/errors';
import { type CandidateResult, EVALUATION_RANKING } from '../model/evaluation/candidate-result';
import { rankedByLine } from './ranking-lines';
import { comparePaired, type PairedComparison, taskScoresOf } from '../model/race/paired-comparison';
import { table } from './format';
import { print, printJson } from './print';
import { pairHref } from './views';
import { configPath, ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { harborVersionsDiffer } from '../model/harbor/version';

interface CompareFlags extends ConnectionFlags {
  json?: boolean;
  resamples?: number;
  seed: string;
  passThreshold: string;
}

/** An evaluation id as it is, or (with a vero.yaml) a candidate ref: the evaluation of that commit under that config. */
async function resultOf(client: Client, ref: string, which: 'A' | 'B', config: string | null): Promise<CandidateResult> {
  const describe = (id: string) =>
    client.workflow
      .getHandle(id)
      .describe()
      .catch(() => null);
  let id = ref;
  let d = await describe(ref);
  if (!d) {
    if (!config)
      throw new ConfigError(`${which}: no evaluation "${ref}" on this server (give an evaluation id, or a candidate with -c vero.yaml)`);
    id = (await prepareEvalInput(loadEvalConfig(config), ref)).evalId;
    d = await describe(id);
    if (!d)
      throw new ConfigError(
        `${which}: candidate "${ref}" has no evaluation under ${config} (expected ${id}; start it with vero start-eval)`,
      );
  }
  if (d.status.name !== 'COMPLETED')
    throw new ConfigError(`${which}: evaluation ${id} is ${d.status.name.toLowerCase()}; compare needs completed evaluations`);
  return withTasks((await client.workflow.getHandle(id).result()) as CandidateResult);
}

export function registerCompareCommand(program: Command): void {
  withConnection(
    program
      .command('compare <A> <B>')
      .description('is B better than A? paired comparison on the tasks both evaluated: deltas, a bootstrap interval, McNemar, a verdict')
      .option('--json', 'machine-readable output')
      .option('--resamples <n>', 'bootstrap resamples (default 10000)', parseIntFlag('--resamples'))
      .option('--seed <s>', 'bootstrap seed (the same inputs and seed give the same interval)', 'vero-compare')
      .option('--pass-threshold <x>', 'a task passes at this score or above (for McNemar and the flips)', '1')
      .addHelpText(
        'after',
        `
A and B are evaluation ids (vero list), or candidates (a tag, a sha) with -c vero.yaml: the evaluation of that
commit under that config. Exit codes: 0 compared (whatever the verdict); 2 bad input (unknown or unfinished
evaluation); 3 no server.`,
      ),
  ).action(compare);
}

/** `vero compare A B`: both results, compared, with a warning when they were not evaluated alike. */
async function compare(refA: string, refB: string, o: CompareFlags): Promise<void> {
  const threshold = Number(o.passThreshold);
  if (!Number.isFinite(threshold)) throw new ConfigError(`--pass-threshold: expected a number, got "${o.passThreshold}"`);
  const conn = connectionSettings(o);
  const client = await connectTo(conn, o.json);
  try {
    const config = configPath(o);
    const [a, b] = [await resultOf(client, refA, 'A', config), await resultOf(client, refB, 'B', config)];
    const c = comparePaired(taskScoresOf(a), taskScoresOf(b), {
      seed: o.seed,
      passThreshold: threshold,
      ...(o.resamples ? { resamples: o.resamples } : {}),
    });
    if (a.configDigest !== b.configDigest)
      process.stderr.write('warning: A and B were evaluated under different configs (tasks, harbor settings or scoring)\n');
    const versions = harborVersionsDiffer(a.harborVersions, b.harborVersions);
    if (versions) process.stderr.write(`warning: ${versions}\n`);
    if (o.json)
      return printJson({
        a: { evalId: a.evalId, candidate: a.candidate, candidateRef: a.candidateRef },
        b: { evalId: b.evalId, candidate: b.candidate, candidateRef: b.candidateRef },
        harborVersions: { a: a.harborVersions ?? [], b: b.harborVersions ?? [], differ: versions !== null },
        rankedBy: EVALUATION_RANKING,
        ...c,
      });
    printComparison(a, b, c, threshold, versions);
  } finally {
    await client.connection.close();
  }
  process.exitCode = ExitCode.ok;
}

/** The comparison as text: the tasks whose score changed, then the summary lines and the verdict. */
function printComparison(a: CandidateResult, b: CandidateResult, c: PairedComparison, threshold: number, versions: string | null): void {
  const changed = c.deltas.filter((d) => d.delta !== 0);
  print(`A ${a.candidateRef} (${a.evalId})\nB ${b.candidateRef} (${b.evalId})\n`);
  if (changed.length)
    print(
      `${table(
        ['task', 'A', 'B', 'delta'],
        changed.map((d) => [d.task, d.a.toFixed(3), d.b.toFixed(3), `${d.delta > 0 ? '+' : ''}${d.delta.toFixed(3)}`]),
      )}\n\nstep by step in vero view: ${pairHref(a.evalId, b.evalId, changed[0]!.task)} (task=any task above)\n`,
    );
  print(
    [
      `shared    ${c.n} task(s) (${c.n - changed.length} unchanged)${c.onlyInA.length || c.onlyInB.length ? `; not compared: ${c.onlyInA.length} only in A, ${c.onlyInB.length} only in B` : ''}`,
      `mean      A ${c.meanA.toFixed(3)}  B ${c.meanB.toFixed(3)}  delta ${c.meanDelta >= 0 ? '+' : ''}${c.meanDelta.toFixed(3)}${c.ci95 ? `  95% CI [${c.ci95[0].toFixed(3)}, ${c.ci95[1].toFixed(3)}] (paired bootstrap, ${c.bootstrap.resamples} resamples, seed ${c.bootstrap.seed})` : ''}`,
      `flips     ${c.flippedToPass.length} to pass, ${c.flippedToFail.length} to fail (pass = score ≥ ${threshold}); exact McNemar p = ${c.mcnemar.pValue.toPrecision(3)}`,
      `ranking   ${rankedByLine(EVALUATION_RANKING)}`,
      `verdict   ${c.summary}`,
      ...(versions ? [`harbor    ${versions}`] : []),
    ].join('\n'),
  );
}
