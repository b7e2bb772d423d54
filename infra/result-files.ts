/** An evaluation's files that finalize reads and writes: chunk rows, per-task samples, the result file a retry updates. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { typedFailure } from '../model/errors';
import { FailureType } from '../model/failures';
import type { TaskResult } from '../model/evaluation/task-result';
import { writeJsonDurable } from './atomic-file';

/** The rows a chunk saved (model/paths.ts runPaths chunkFile). */
export const readChunkRows = (file: string): TaskResult[] => JSON.parse(fs.readFileSync(file, 'utf8')) as TaskResult[];

/**
 * Replaces the samples dir with one `<i>.json` per sample: atomic each, not flushed (thousands of fsyncs would
 * hold the worker's event loop); the result file written after them commits them.
 */
export function replaceSamples(samplesDir: string, samples: unknown[]): void {
  fs.rmSync(samplesDir, { recursive: true, force: true });
  samples.forEach((s, i) => writeJsonDurable(path.join(samplesDir, `${i}.json`), s, { fsync: false }));
}

/** The result file a `vero retry` run updates: its rows (all of them, whatever the count), start and retries. */
export function previousResult(file: string): Pick<CandidateResult, 'startedAt' | 'retries'> & { tasks: TaskResult[] } {
  let parsed: Partial<CandidateResult>;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<CandidateResult>;
  } catch (e) {
    throw typedFailure(FailureType.InvalidInput, `retry: cannot read the result file ${file}: ${(e as Error).message}`);
  }
  if (!Array.isArray(parsed.tasks) || typeof parsed.startedAt !== 'string')
    throw typedFailure(FailureType.InvalidInput, `retry: ${file} holds no result rows`);
  return { tasks: parsed.tasks, startedAt: parsed.startedAt, retries: parsed.retries };
}
