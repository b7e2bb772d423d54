/** An evaluation's files that finalize reads and writes besides the result file: chunk rows, per-task samples. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TaskResult } from '../model/task-result';
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
