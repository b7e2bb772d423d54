/**
 * `vero trials` over a big jobs dir on several threads: this one and worker threads (collate-thread.ts) take
 * chunks of whole tasks off one shared counter, read their trial files and score them (`collate` per chunk), and
 * send back only the rows. A chunk holds every trial dir named after its tasks (`<task>__<suffix>`); when a task's
 * trials turn out to be named otherwise (a row for one task in two chunks), it is all done again on this thread,
 * so the rows are always those of `loadTrials` + `collate`. A thread that fails or cannot start leaves its chunks
 * to this one: it costs time, never a row.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Aggregation } from '../model/harbor/trial-ranking';
import { collate, type CollatedTask, groupBy, type InvalidTrialFile, listTrialDirs, readTrialDirs, taskOfTrialDir } from './collate';
import { PROJECT_ROOT } from '../infra/package-root';

/**
 * Below this many trial dirs one thread is as fast: a worker thread takes ≈ 30 ms to start, and on 2 cores the
 * threads slow each other down (by hand, 2 threads against 1: no gain at 5,000 trials, 6% at 10,000, 21% at 20,000).
 */
export const PARALLEL_MIN_TRIALS = 10_000;
/** Past a few threads the disk and the path lookups are the limit. */
export const MAX_COLLATION_THREADS = 4;
const CHUNK_TRIALS = 250;

/** The threads `vero trials` uses by default (this one included): one for a small dir, else one per core, up to 4. */
function defaultCollationThreads(trialDirCount: number): number {
  if (trialDirCount < PARALLEL_MIN_TRIALS) return 1;
  return Math.max(1, Math.min(os.availableParallelism(), MAX_COLLATION_THREADS));
}

interface ScoringOptions {
  rewardKey?: string;
  aggregate?: Aggregation;
}

/** What a worker thread is handed (structured-cloned once): the chunks, and the counter every thread claims from. */
export interface CollationThreadJob {
  chunks: string[][];
  within: string;
  scoring: ScoringOptions;
  /** An Int32 (shared): the next chunk to claim. */
  nextChunk: SharedArrayBuffer;
}

/** One chunk scored: its rows, its unreadable files, and the file of each chosen trial. */
export interface ScoredChunk {
  index: number;
  rows: CollatedTask[];
  invalid: InvalidTrialFile[];
  chosenFiles: [trial: string, file: string][];
}

/** Trial dirs cut into chunks of about `size`, never splitting the dirs named after one task. */
export function chunksOfWholeTasks(trialDirs: readonly string[], size: number): string[][] {
  const byTask = groupBy(trialDirs, taskOfTrialDir);
  const chunks: string[][] = [];
  let current: string[] = [];
  for (const task of [...byTask.keys()].sort()) {
    current.push(...byTask.get(task)!);
    if (current.length >= size) {
      chunks.push(current);
      current = [];
    }
  }
  if (current.length) chunks.push(current);
  return chunks;
}

function scoreChunk(trialDirs: readonly string[], within: string, scoring: ScoringOptions, index: number): ScoredChunk {
  const loaded = readTrialDirs(trialDirs, within);
  const rows = collate(loaded.trials, { ...scoring, invalid: loaded.invalid });
  const chosen = new Set(rows.map((r) => r.trial));
  const chosenFiles = loaded.trials
    .filter((t) => chosen.has(t.result.trial_name))
    .map((t): [string, string] => [t.result.trial_name, t.file]);
  return { index, rows, invalid: loaded.invalid, chosenFiles };
}

/** Claims chunks until none is left, handing over each one as it is scored. Runs on every thread. */
export function scoreClaimedChunks(job: CollationThreadJob, onChunk: (chunk: ScoredChunk) => void): void {
  const next = new Int32Array(job.nextChunk);
  for (let index = Atomics.add(next, 0, 1); index < job.chunks.length; index = Atomics.add(next, 0, 1)) {
    onChunk(scoreChunk(job.chunks[index]!, job.within, job.scoring, index));
  }
}

/** collate-thread.js, built next to this file (from the TypeScript sources, as the tests run, the built one). */
function threadScript(): string {
  const dir = __filename.endsWith('.ts') ? path.join(PROJECT_ROOT, 'dist', 'harbor') : __dirname;
  return path.join(dir, 'collate-thread.js');
}

/** Runs one worker thread over the job; resolves when it has exited, whatever the reason. */
function runThread(script: string, job: CollationThreadJob, scored: ScoredChunk[]): Promise<void> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(script, { workerData: job });
    } catch {
      resolve(); // it cannot start: this thread scores its share
      return;
    }
    worker.on('message', (chunk: ScoredChunk) => (scored[chunk.index] = chunk));
    worker.on('error', () => undefined); // the chunks it claimed and did not send are scored below
    worker.on('exit', () => resolve());
  });
}

export interface CollatedJobs {
  rows: CollatedTask[];
  invalid: InvalidTrialFile[];
  /** The result.json of each chosen trial, by trial name. */
  chosenFiles: Map<string, string>;
}

export interface ParallelCollateOptions extends ScoringOptions {
  /** Threads in all, this one included (default: defaultCollationThreads). 1 does it all here. */
  threads?: number;
  /** For tests: trial dirs to a chunk, the worker threads' script, and whether this thread scores chunks too. */
  chunkTrials?: number;
  script?: string;
  scoreHere?: boolean;
}

/** Unreadable files in the order `loadTrials` finds them (chunks go task by task). */
function inListingOrder(invalid: InvalidTrialFile[], trialDirs: readonly string[]): InvalidTrialFile[] {
  if (invalid.length < 2) return invalid;
  const position = new Map(trialDirs.map((dir, i) => [dir, i]));
  const at = (bad: InvalidTrialFile) => position.get(path.dirname(bad.file)) ?? -1;
  return invalid.sort((a, b) => at(a) - at(b));
}

/** All of it on this thread: `collate(loadTrials(dir))`, as one chunk. */
function collateHere(trialDirs: readonly string[], dir: string, scoring: ScoringOptions): CollatedJobs {
  const { rows, invalid, chosenFiles } = scoreChunk(trialDirs, dir, scoring, 0);
  return { rows, invalid, chosenFiles: new Map(chosenFiles) };
}

/** `collate(loadTrials(dir))` on several threads: the same rows, unreadable files and chosen trials. */
export async function collateInParallel(dir: string, opts: ParallelCollateOptions = {}): Promise<CollatedJobs> {
  const scoring: ScoringOptions = { rewardKey: opts.rewardKey, aggregate: opts.aggregate };
  const trialDirs = listTrialDirs(dir);
  const threads = opts.threads ?? defaultCollationThreads(trialDirs.length);
  if (threads <= 1) return collateHere(trialDirs, dir, scoring);
  const job: CollationThreadJob = {
    chunks: chunksOfWholeTasks(trialDirs, opts.chunkTrials ?? CHUNK_TRIALS),
    within: dir,
    scoring,
    nextChunk: new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT),
  };
  const scored: ScoredChunk[] = [];
  const script = opts.script ?? threadScript();
  const others = Array.from({ length: threads - 1 }, () => runThread(script, job, scored));
  if (opts.scoreHere !== false) scoreClaimedChunks(job, (chunk) => (scored[chunk.index] = chunk));
  await Promise.all(others);
  job.chunks.forEach((chunk, index) => (scored[index] ??= scoreChunk(chunk, dir, scoring, index)));
  const rows = scored.flatMap((c) => c.rows);
  const tasks = new Set(rows.map((r) => r.task));
  if (tasks.size !== rows.length) return collateHere(trialDirs, dir, scoring); // a task's trials are named after another
  return {
    rows: rows.sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0)),
    invalid: inListingOrder(
      scored.flatMap((c) => c.invalid),
      trialDirs,
    ),
    chosenFiles: new Map(scored.flatMap((c) => c.chosenFiles)),
  };
}
