/**
 * `vero demo --optimize`: the compiler's half of the product, end to end on real Harbor and Docker. For each
 * example (Mode A: a trusted scorer; Mode B: nested Harbor in the sidecar's own Docker engine) it builds the
 * task, runs it with Harbor's oracle (the baseline's reward) and with the example optimizer (which commits the
 * example's improvement and spends eval budget), and prints both rewards and the sidecar's candidate table.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildTaskDir } from '../compiler/compile';
import { EXAMPLE_OPTIMIZER, runCompiledTask, type CompiledTaskOutcome } from '../harbor/compiled-task-run';
import { PROJECT_ROOT } from '../infra/package-root';
import { ensureHarbor, ensuredHarborFrom, makeAgentRepo } from '../infra/foreground';
import { DemoFailedError } from '../model/errors';
import { table } from './format';
import { HARBOR_VERSION } from '../model/harbor/version';
import { demoOptimizePaths } from '../model/paths';

export const DEMO_MODES = { a: 'mode-a', b: 'mode-b' } as const;

const rewardOf = (o: CompiledTaskOutcome): number | null => (o.reward ? (Object.values(o.reward)[0] ?? null) : null);

function describeRun(label: string, o: CompiledTaskOutcome): string {
  const reward = o.reward ? JSON.stringify(o.reward) : `none (${o.exception?.exception_type ?? `harbor exit ${o.exitCode}`})`;
  return `${label.padEnd(10)} reward ${reward}${o.finalize ? `  (${o.finalize.reason}; commit ${o.finalize.commit?.slice(0, 12) ?? '-'})` : ''}`;
}

function candidateTable(o: CompiledTaskOutcome): string {
  const rows = (o.finalize?.candidates ?? []).map((c) => [
    c.seq,
    c.commit.slice(0, 12),
    c.split,
    c.n_samples,
    c.mean_score.toFixed(3),
    c.n_errors,
    c.commit === o.finalize?.commit ? 'yes' : '',
  ]);
  return rows.length ? table(['#', 'commit', 'split', 'samples', 'mean', 'errors', 'rewarded'], rows) : '(no evaluation recorded)';
}

export async function demoOptimize(opts: { home: string; modes: (keyof typeof DEMO_MODES)[]; json?: boolean }): Promise<void> {
  const harbor = ensureHarbor(HARBOR_VERSION);
  const harborFrom = ensuredHarborFrom(HARBOR_VERSION);
  // The examples with their relative paths, next to a fresh example agent repo.
  const home = demoOptimizePaths(opts.home);
  const examples = home.examples;
  fs.rmSync(examples, { recursive: true, force: true });
  fs.cpSync(path.join(PROJECT_ROOT, 'examples'), examples, { recursive: true, filter: (s) => !s.includes(`${path.sep}agent-repo`) });
  makeAgentRepo(path.join(examples, 'agent-repo'), examples);
  const summary: Record<string, { baseline: number | null; optimized: number | null; candidates: unknown }> = {};
  for (const mode of opts.modes) {
    const name = DEMO_MODES[mode];
    const taskDir = home.taskDir(name);
    process.stderr.write(
      `\n== ${name}: vero build (copies vero, its dependencies${mode === 'b' ? ', Harbor and the inner images' : ''}) ==\n`,
    );
    const built = await buildTaskDir(path.join(examples, name, 'build.yaml'), taskDir);
    for (const w of built.warnings) process.stderr.write(`warning: ${w}\n`);
    const jobsDir = home.jobsDir(name);
    fs.rmSync(jobsDir, { recursive: true, force: true });
    const usual = mode === 'b' ? '≈ 2 min' : '≈ 1 min';
    process.stderr.write(`harbor run -p ${taskDir} -a oracle -e docker (builds both images; ${usual}) …\n`);
    const baseline = await runCompiledTask({ harbor, harborFrom, taskDir, jobsDir, jobName: 'oracle', agent: { kind: 'oracle' } });
    process.stderr.write(`harbor run -p ${taskDir} --agent-import-path ${EXAMPLE_OPTIMIZER.importPath} -e docker (${usual}) …\n`);
    const optimized = await runCompiledTask({
      harbor,
      harborFrom,
      taskDir,
      jobsDir,
      jobName: 'optimizer',
      agent: { kind: 'import', importPath: EXAMPLE_OPTIMIZER.importPath, pythonPath: EXAMPLE_OPTIMIZER.pythonPath },
    });
    summary[name] = { baseline: rewardOf(baseline), optimized: rewardOf(optimized), candidates: optimized.finalize?.candidates ?? [] };
    if (!opts.json)
      process.stdout.write(
        `\n== ${name} ==\n${describeRun('baseline', baseline)}\n${describeRun('optimized', optimized)}\n\nthe sidecar's candidates (optimizer run):\n${candidateTable(optimized)}\ntrials: ${baseline.trialDir ?? jobsDir}, ${optimized.trialDir ?? jobsDir}\n`,
      );
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  const broken = Object.entries(summary).filter(([, s]) => s.baseline === null || s.optimized === null || !(s.optimized > s.baseline));
  if (broken.length)
    throw new DemoFailedError(
      `the optimized reward is not above the baseline's for ${broken.map(([n]) => n).join(', ')} (see the trial dirs above)`,
    );
}
