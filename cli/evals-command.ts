/**
 * vero's agent-side commands, as vero documents them (`evals run`, `evals status`, `evals wait`, `evals submit`),
 * onto ours: the same jobs, the same bound, the same budget. They print JSON with the API's snake_case fields,
 * as vero's do. A compiled task's `main` has them as `evals …` (bin/evals) and as `vero evals …`.
 */
import { Command } from 'commander';
import { ConfigError } from '../model/errors';
import { DEFAULT_WAIT_SEC, type JobAnswer, startAndWait, type WaitFlags, waitBoundOptions, waitForJob } from './eval-job-wait';
import { parseIntFlag } from './int-flag';
import { call, sidecarUrl } from './sidecar-client';
import { printJson } from './print';

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** A job as vero's `evals run`/`evals wait` print it: the result once complete, else the job record. */
const jobOut = (job: JobAnswer) => printJson(job.status === 'complete' && job.result ? { job_id: job.job_id, ...job.result } : job);

interface RunFlags extends WaitFlags {
  partition?: string;
  split?: string;
  version?: string;
  caseId?: string[];
  start?: number;
  stop?: number;
  detach?: boolean;
  backend?: string;
  evaluationSet?: string;
  url?: string;
}

/** --timeout's help in `evals run` and `evals wait`. */
const TIMEOUT_HELP = `wait at most this long (default $VERO_EVAL_WAIT_SEC or ${DEFAULT_WAIT_SEC}), then print the running job`;

/** `--start A --stop B` as sample ids, `--case-id` as names; one of the two, as vero's `evals run`. */
function selection(o: RunFlags): { sample_ids?: number[]; case_ids?: string[] } {
  if (o.caseId?.length && (o.start !== undefined || o.stop !== undefined))
    throw new ConfigError('--case-id cannot be combined with --start/--stop');
  if ((o.start === undefined) !== (o.stop === undefined)) throw new ConfigError('--start and --stop go together');
  if (o.start !== undefined && o.stop !== undefined) {
    if (o.stop <= o.start) throw new ConfigError(`--stop: expected more than --start (${o.start}), got ${o.stop}`);
    return { sample_ids: Array.from({ length: o.stop - o.start }, (_, i) => o.start! + i) };
  }
  return o.caseId?.length ? { case_ids: o.caseId } : {};
}

export function registerEvalsCommand(program: Command): void {
  const evals = program
    .command('evals')
    .description("vero's agent-side commands (evals run / status / wait / submit) onto this task's eval sidecar; JSON output");
  waitBoundOptions(
    evals
      .command('run')
      .description(
        'evaluate a committed candidate (spends budget); waits within a bound, then prints the result or the running job (wait on its job_id)',
      )
      .option('--partition <name>', 'the partition (split) to evaluate on')
      .option('--split <name>', 'the same as --partition')
      .option('--version <ref>', 'candidate commit (default HEAD of /workspace/agent)')
      .option('--case-id <id>', 'evaluate only this case (a task name; repeatable)', collect)
      .option('--start <n>', 'first case index of a slice (with --stop)', parseIntFlag('--start'))
      .option('--stop <n>', 'end of the slice, exclusive', parseIntFlag('--stop'))
      .option('--detach', 'print the job at once, without waiting')
      .option('--backend <id>', "accepted for vero's instructions: a task has one backend")
      .option('--evaluation-set <name>', "accepted for vero's instructions: a task has one evaluation set (its splits are partitions)")
      .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)'),
    TIMEOUT_HELP,
  ).action(async (o: RunFlags) => {
    const split = o.partition ?? o.split;
    if (!split) throw new ConfigError('--partition: required (the split to evaluate on; `evals status` lists them)');
    const job = await startAndWait(sidecarUrl(o.url), { split, ...(o.version ? { commit: o.version } : {}), ...selection(o) }, o);
    jobOut(job);
  });
  waitBoundOptions(
    evals
      .command('wait')
      .description('wait (bounded) for a job; prints its result, or the running job (wait again); a failed or cancelled job exits 1')
      .argument('<job_id>')
      .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)'),
    TIMEOUT_HELP,
  ).action(async (id: string, o: WaitFlags & { url?: string }) => {
    jobOut(await waitForJob(sidecarUrl(o.url), id, o));
  });
  evals
    .command('status')
    .description('without a job id: the splits, access and budgets left; with one: that job (status, elapsed_sec, progress)')
    .argument('[job_id]')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .action(async (id: string | undefined, o: { url?: string }) => {
      printJson(await call(sidecarUrl(o.url), 'GET', id ? `/eval/jobs/${encodeURIComponent(id)}` : '/status'));
    });
  evals
    .command('submit')
    .description('nominate the candidate to be graded (when the task enables it)')
    .option('--version <ref>', 'commit to submit (default HEAD)')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .action(async (o: { version?: string; url?: string }) => {
      printJson(await call(sidecarUrl(o.url), 'POST', '/submit', { commit: o.version }));
    });
}
