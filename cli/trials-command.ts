/** `vero trials`: collate any Harbor jobs dir offline. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { collate, collatedRow, loadTrials } from '../infra/collate';
import { ConfigError } from '../model/errors';
import { fmtScore, table } from './format';

export function registerTrialsCommand(program: Command): void {
  program
    .command('trials <jobsDir>')
    .description('score the tasks of a Harbor jobs dir (or one job dir) offline: best trial per task, deterministically')
    .option(
      '--json',
      'print {"tasks": [{task, taskName, status, score, trial, metrics, nTrials, exceptions, error}]} sorted by task (the rows of `vero results --json`)',
    )
    .option('--reward-key <key>', 'the reward to read (default: pass, then reward, then the mean of all rewards)')
    .addOption(new Option('--aggregate <how>', 'per-task aggregation over attempts').choices(['best', 'mean']).default('best'))
    .action((dir: string, o: { json?: boolean; rewardKey?: string; aggregate: 'best' | 'mean' }) => {
      if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new ConfigError(`${dir}: not a directory`);
      const loaded = loadTrials(dir);
      const rows = collate(loaded.trials, { rewardKey: o.rewardKey, aggregate: o.aggregate, invalid: loaded.invalid });
      for (const bad of loaded.invalid) process.stderr.write(`warning: skipped ${bad.file}: ${bad.reason}\n`);
      if (o.json) {
        // The rows of `vero results --json`, less what only a run knows (runs, timedOut, notes, harborVersion).
        const jobOf = new Map(loaded.trials.map((t) => [t.result.trial_name, path.dirname(path.dirname(t.file))]));
        const tasks = rows.map((r) => collatedRow(r, (r.trial && jobOf.get(r.trial)) ?? path.resolve(dir)));
        process.stdout.write(`${JSON.stringify({ tasks }, null, 2)}\n`);
        return;
      }
      const out = table(
        ['task', 'status', 'score', 'trials', 'chosen trial', 'exceptions'],
        rows.map((r) => [r.task, r.status, fmtScore(r.score), r.nTrials, r.trial, r.exceptions.join(',')]),
      );
      const scored = rows.filter((r) => r.status === 'scored');
      const mean = rows.length ? scored.reduce((a, r) => a + (r.score ?? 0), 0) / rows.length : 0;
      process.stdout.write(`${out}\n\n${rows.length} task(s), ${scored.length} scored, mean ${fmtScore(mean)} (errors count as 0)\n`);
    });
}
