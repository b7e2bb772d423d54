/**
 * The agent side's bounded wait for an evaluation job: a coding agent's tool call dies after a few minutes, so
 * `vero eval` and `vero eval wait` return within a bound, with the job's id and progress when it has not
 * finished (the evaluation keeps running in the sidecar; waiting again is always safe and costs nothing).
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { SidecarError } from '../model/errors';
import { callRetrying } from './sidecar-client';
import { parseIntFlag } from './int-flag';

/** Default bound of one `vero eval` / `vero eval wait` call: under the tool-call caps `vero run` sets (300 s). */
export const DEFAULT_WAIT_SEC = 240;
export const DEFAULT_POLL_SEC = 5;

export interface WaitFlags {
  timeout?: number;
  pollInterval?: number;
}

/** The bound's flags (--timeout, its help given; --poll-interval) of the commands that wait for a job. */
export const waitBoundOptions = (c: Command, timeoutHelp: string): Command =>
  c
    .option('--timeout <sec>', timeoutHelp, parseIntFlag('--timeout'))
    .option(
      '--poll-interval <sec>',
      `seconds between checks (default ${DEFAULT_POLL_SEC})`,
      parseIntFlag('--poll-interval', { min: 1, max: 3600 }),
    );

export interface JobAnswer {
  job_id: string;
  status: 'running' | 'complete' | 'failed' | 'cancelled';
  split: string;
  commit: string;
  n_samples: number;
  elapsed_sec: number;
  progress?: { done: number; total: number; errors: number };
  result?: Record<string, unknown>;
  error?: string;
}

/** The bound in seconds: the flag, else `VERO_EVAL_WAIT_SEC`, else the default. */
function waitBoundSec(flag?: number): number {
  if (flag !== undefined) return flag;
  const env = process.env.VERO_EVAL_WAIT_SEC;
  if (env && /^\d+$/.test(env)) return Number(env);
  return DEFAULT_WAIT_SEC;
}

/** When a call started now must return (its bound). */
const deadlineOf = (flags: WaitFlags): number => Date.now() + waitBoundSec(flags.timeout) * 1000;

/**
 * Polls the job (or the job of that id) until it ends or the bound passes. Returns the finished job or the running one; a failed or
 * cancelled job throws (exit 1, with the sidecar's reason).
 */
export async function waitForJob(base: URL, first: JobAnswer | string, flags: WaitFlags, deadline = deadlineOf(flags)): Promise<JobAnswer> {
  const pollMs = Math.max(1, flags.pollInterval ?? DEFAULT_POLL_SEC) * 1000;
  const get = (id: string) =>
    callRetrying(base, 'GET', `/eval/jobs/${encodeURIComponent(id)}`, undefined, {}, undefined, deadline) as Promise<JobAnswer>;
  let job = typeof first === 'string' ? await get(first) : first;
  while (job.status === 'running' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
    job = await get(job.job_id);
  }
  if (job.status === 'failed' || job.status === 'cancelled')
    throw new SidecarError(0, `evaluation ${job.job_id} ${job.status}: ${job.error ?? 'no reason recorded'}`);
  return job;
}

export interface EvalRequest {
  split: string;
  commit?: string;
  num_samples?: number;
  sample_ids?: number[];
  case_ids?: string[];
}

/** Starts (or re-attaches to) one evaluation job and waits for it within the bound. */
export async function startAndWait(url: URL, req: EvalRequest, flags: WaitFlags & { detach?: boolean }): Promise<JobAnswer> {
  // One id for this evaluation, re-sent on every retry: the sidecar charges it once, and it is the job's id.
  const body = { ...req, request_id: randomUUID() };
  const deadline = deadlineOf(flags);
  const job = (await callRetrying(url, 'POST', '/eval/jobs', body, {}, undefined, deadline)) as JobAnswer;
  return flags.detach ? job : waitForJob(url, job, flags, deadline);
}

/** The still-running answer, as text: what it is, how far it is, and what to run next. */
export function runningText(job: JobAnswer): string {
  const p = job.progress
    ? `, ${job.progress.done}/${job.progress.total} task(s) done${job.progress.errors ? ` (${job.progress.errors} error(s))` : ''}`
    : '';
  return [
    `evaluation ${job.job_id} is still running: ${job.split} @ ${job.commit.slice(0, 12)}, ${job.n_samples} sample(s), ${job.elapsed_sec} s so far${p}`,
    `it keeps running (its budget is already charged, once); run \`vero eval wait ${job.job_id}\` for its result`,
  ].join('\n');
}

/** The answer `vero eval --json` prints for a job: its result with the id, or the running job. */
export function jobJson(job: JobAnswer): Record<string, unknown> {
  if (job.status === 'complete' && job.result) return { eval_id: job.job_id, ...job.result };
  const { result: _r, job_id, ...rest } = job;
  return { eval_id: job_id, ...rest, next: `vero eval wait ${job_id}` };
}
