/** `vero trials`: collate any Harbor jobs dir offline. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { collatedRow, jobDirsWithoutResults } from '../harbor/collate';
import {
  collateInParallel,
  type CollatedJobs,
  MAX_COLLATION_THREADS,
  PARALLEL_MIN_TRIALS,
  type ParallelCollateOptions,
} from '../harbor/collate-parallel';
import { jobDirsOfRunDir } from '../client/eval-jobs';
import { ConfigError } from '../model/errors';
import { fmtScore, table } from './format';
import { parseIntFlag } from './int-flag';
import { print, printJson } from './print';

const TRIALS_DESCRIPTION =
  "score the tasks of a Harbor jobs dir (or one job dir, or an evaluation's run dir: <home>/runs/<id> takes each task's latest job across its runs, <home>/runs/<id>/<run> that run's jobs) offline: best trial per task, deterministically";

/** Collates each dir (a jobs dir or a job dir) and merges the rows: one per task, in task order. */
async function collateDirs(dirs: string[], opts: ParallelCollateOptions): Promise<CollatedJobs> {
  if (dirs.length === 1) return collateInParallel(dirs[0]!, opts);
  const each = await Promise.all(dirs.map((d) => collateInParallel(d, { ...opts, threads: 1 })));
  return {
    rows: each.flatMap((c) => c.rows).sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0)),
    invalid: each.flatMap((c) => c.invalid),
    chosenFiles: new Map(each.flatMap((c) => [...c.chosenFiles])),
  };
}

export function registerTrialsCommand(program: Command): void {
  program
    .command('trials <jobsDir>')
    .description(TRIALS_DESCRIPTION)
    .option(
      '--json',
      'print {"tasks": [{task, taskName, status, score, trial, metrics, nTrials, exceptions, error}]} sorted by task (the rows of `vero results --json`)',
    )
    .option('--reward-key <key>', 'the reward to read (default: pass, then reward, then the mean of all rewards)')
    .addOption(new Option('--aggregate <how>', 'per-task aggregation over attempts').choices(['best', 'mean']).default('best'))
    .option(
      '--threads <n>',
      `threads reading and scoring the result.json files, this one included (default: 1 under ${PARALLEL_MIN_TRIALS.toLocaleString('en')} trials, else one per core up to ${MAX_COLLATION_THREADS}); the rows do not depend on it`,
      parseIntFlag('--threads', { min: 1, max: 64 }),
    )
    .action(async (dir: string, o: { json?: boolean; rewardKey?: string; aggregate: 'best' | 'mean'; threads?: number }) => {
      if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new ConfigError(`${dir}: not a directory`);
      const dirs = jobDirsOfRunDir(dir) ?? [dir]; // an evaluation's run dir: its jobs dirs
      const { rows, invalid, chosenFiles } = await collateDirs(dirs, o);
      for (const bad of invalid) process.stderr.write(`warning: skipped ${bad.file}: ${bad.reason}\n`);
      // Every job dir is a row or a named skip: a crashed or empty one is never dropped silently.
      const skipped = dirs.flatMap((d) => jobDirsWithoutResults(d));
      for (const s of skipped) process.stderr.write(`warning: no row for ${s.jobDir}: ${s.reason}\n`);
      if (o.json) {
        // The rows of `vero results --json`, less what only a run knows (runs, timedOut, notes, harborVersion).
        const jobOf = (trial: string | null) => {
          const file = trial === null ? undefined : chosenFiles.get(trial);
          return file ? path.dirname(path.dirname(file)) : path.resolve(dir);
        };
        const tasks = rows.map((r) => collatedRow(r, jobOf(r.trial)));
        const skippedJobDirs = skipped.length ? { skippedJobDirs: skipped } : {};
        return printJson({ tasks, ...skippedJobDirs });
      }
      const withInvalid = rows.some((r) => r.nInvalidTrials);
      const out = table(
        ['task', 'status', 'score', 'trials', 'chosen trial', 'exceptions', ...(withInvalid ? ['not valid'] : [])],
        rows.map((r) => [
          r.task,
          r.status,
          fmtScore(r.score),
          r.nTrials,
          r.trial,
          r.exceptions.join(','),
          ...(withInvalid ? [r.nInvalidTrials ? `${r.nInvalidTrials}: ${r.invalidReasons.join(', ')}` : ''] : []),
        ]),
      );
      const scored = rows.filter((r) => r.status === 'scored');
      const mean = rows.length ? scored.reduce((a, r) => a + (r.score ?? 0), 0) / rows.length : 0;
      const nInvalid = rows.reduce((a, r) => a + r.nInvalidTrials, 0);
      const invalidNote = nInvalid ? `; ${nInvalid} trial(s) with a reward Harbor's error policy marks not valid, never scored` : '';
      const skippedNote = skipped.length ? `; ${skipped.length} job dir(s) without any result.json, no row (named above)` : '';
      print(
        `${out}\n\n${rows.length} task(s), ${scored.length} scored, mean ${fmtScore(mean)} (errors count as 0)${invalidNote}${skippedNote}`,
      );
    });
}
