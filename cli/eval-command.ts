/** `vero eval`: one metered evaluation (the optimizer's), waited for within a bound; `vero eval wait ID` resumes. */
import { Command } from 'commander';
import { ConfigError } from '../model/errors';
import { parseIntFlag } from './int-flag';
import { sidecarUrl } from './sidecar-client';
import {
  DEFAULT_WAIT_SEC,
  jobJson,
  type JobAnswer,
  runningText,
  startAndWait,
  type WaitFlags,
  waitBoundOptions,
  waitForJob,
} from './eval-job-wait';
import { printAnswer } from './print';

type EvalFlags = WaitFlags & {
  split?: string;
  commit?: string;
  numSamples?: number;
  sampleIds?: string;
  url?: string;
  json?: boolean;
  detach?: boolean;
};

/** What `vero eval` prints for a finished evaluation. */
function resultText(r: Record<string, unknown>): string {
  const x = r as {
    commit: string;
    split: string;
    n_samples: number;
    n_errors: number;
    mean_score: number;
    result_path: string | null;
    budget_remaining: unknown;
    invalid_reason?: string;
  };
  return `${x.split} @ ${x.commit.slice(0, 12)}: mean score ${x.mean_score.toFixed(3)} over ${x.n_samples} sample(s)${x.n_errors ? `, ${x.n_errors} error(s) counted as 0` : ''}${x.invalid_reason ? `\nINVALID, not a score of the candidate: ${x.invalid_reason}` : ''}${x.result_path ? `\nresults: ${x.result_path}` : ''}\nbudget left: ${JSON.stringify(x.budget_remaining)}`;
}

/** Prints a job as `vero eval` does: its result when complete, else its id, progress and what to run next. */
function printJob(job: JobAnswer, json?: boolean): void {
  printAnswer(jobJson(job), json, () => (job.status === 'complete' && job.result ? resultText(job.result) : runningText(job)));
}

export function registerEvalCommand(program: Command): void {
  waitBoundOptions(
    program
      .command('eval')
      .usage('--split <split> [options]  |  vero eval wait <id> [options]')
      .description(
        'evaluate a committed candidate on a split through the eval sidecar (spends budget); returns within a bound (--timeout) with the result, or with the evaluation id and its progress when it is still running: then `vero eval wait ID` (waits within the same bound; safe to repeat, never charged again)',
      )
      .argument('[wait]', '`wait`, to wait for an evaluation already started')
      .argument('[id]', 'with `wait`: the evaluation id `vero eval` printed')
      .option('--split <split>', 'the split to evaluate on (required unless waiting)')
      .option('--commit <ref>', 'commit to evaluate (default HEAD of /workspace/agent)')
      .option('--num-samples <n>', 'evaluate the first N samples only', parseIntFlag('--num-samples'))
      .option('--sample-ids <ids>', 'comma-separated sample ids')
      .option('--detach', 'return the evaluation id at once, without waiting')
      .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
      .option('--json', 'machine-readable output'),
    `return after at most this many seconds (default $VERO_EVAL_WAIT_SEC or ${DEFAULT_WAIT_SEC}); an evaluation still running is not stopped`,
  )
    .addHelpText(
      'after',
      `
Exit code: 0 with the result, or with a still-running evaluation (its id, progress, and the command to wait
for it); 1 when the evaluation failed or was cancelled, or the sidecar refused the request (the reason on
stderr). The budget is charged once per evaluation, however many times it is waited for.`,
    )
    .action(runEval);
}

/** `vero eval --split S` starts (or `vero eval wait ID` resumes waiting for) an evaluation, and prints it. */
async function runEval(verb: string | undefined, id: string | undefined, o: EvalFlags): Promise<void> {
  const url = sidecarUrl(o.url);
  if (verb !== undefined) {
    if (verb !== 'wait' || !id)
      throw new ConfigError(
        `expected \`vero eval wait <id>\` or \`vero eval --split <split>\`, got "${[verb, id].filter(Boolean).join(' ')}"`,
      );
    return printJob(await waitForJob(url, id, o), o.json);
  }
  if (!o.split) throw new ConfigError("required option '--split <split>' not specified");
  const job = await startAndWait(
    url,
    {
      split: o.split,
      ...(o.commit ? { commit: o.commit } : {}),
      ...(o.numSamples !== undefined ? { num_samples: o.numSamples } : {}),
      ...(o.sampleIds ? { sample_ids: o.sampleIds.split(',').map((x) => Number(x.trim())) } : {}),
    },
    o,
  );
  printJob(job, o.json);
}
