/** `vero jobs ID`: an evaluation's Harbor job dirs across its runs (client/eval-jobs.ts), for harbor view and friends. */
import * as fs from 'node:fs';
import { Command } from 'commander';
import { evalJobs, EvalJob } from '../client/eval-jobs';
import { defaultHome } from '../infra/eval-config-file';
import { ConfigError } from '../model/errors';
import { homePaths } from '../model/paths';
import { table } from './format';
import { commandConfig, configPath } from './options';

interface JobsFlags {
  config?: string;
  home?: string;
  json?: boolean;
  latest?: boolean;
}

/** The home to look in: --home, else the vero.yaml's (-c, or found here or in a parent), else $VERO_HOME or ~/.vero. */
function homeOf(o: JobsFlags): string {
  if (o.home) return o.home;
  const file = configPath(o);
  return file ? commandConfig(file).home : defaultHome();
}

function printText(evalId: string, jobs: EvalJob[]): void {
  const rows = jobs.map((j) => [
    j.task,
    j.runId,
    `${j.nFinishedTrials}/${j.nTrials}`,
    j.finished ? 'finished' : 'not finished',
    j.latest ? '' : 'replaced',
    j.jobDir,
  ]);
  process.stdout.write(`${table(['task', 'run', 'trials', 'job', 'row', 'job dir'], rows)}\n\n`);
  const runs = new Set(jobs.map((j) => j.runId)).size;
  process.stdout.write(
    `${jobs.length} job(s) of ${evalId} in ${runs} run(s); "replaced": a later run of the task replaced it (its row counts the latest).\n` +
      `Each is a Harbor job dir (harbor view DIR); vero trials ${homePaths('<home>').evalRunsDir(evalId)} scores each task's latest.\n`,
  );
}

export function registerJobsCommand(program: Command): void {
  program
    .command('jobs <evalId>')
    .description("an evaluation's Harbor job dirs across its runs (one job per task per run: a vero retry, or a race, adds a run)")
    .option('-c, --config <file>', 'vero.yaml, for its home (default: the nearest vero.yaml in this directory or a parent)')
    .option('--home <dir>', "the home to look in (default: the vero.yaml's, else $VERO_HOME, else ~/.vero)")
    .option('--latest', "only each task's latest job (the one its row counts)")
    .option(
      '--json',
      'print {evalId, home, jobs: [{task, runId, jobDir, harborLog, nTrials, nFinishedTrials, finished, updatedAt, latest}]} (vero schema jobs)',
    )
    .addHelpText(
      'after',
      `
Jobs are read from <home>/runs/<evalId>/<run>/jobs/<task>; no server is needed. Exit codes: 0 listed; 2 no
run dir of that evaluation under the home.`,
    )
    .action((evalId: string, o: JobsFlags) => {
      const home = homeOf(o);
      const dir = homePaths(home).evalRunsDir(evalId);
      if (!fs.existsSync(dir))
        throw new ConfigError(`${evalId}: no run dir under ${home} (expected ${dir}; give the home with --home or -c)`);
      const jobs = evalJobs(home, evalId).filter((j) => !o.latest || j.latest);
      if (o.json) return void process.stdout.write(`${JSON.stringify({ evalId, home, jobs }, null, 2)}\n`);
      printText(evalId, jobs);
    });
}
