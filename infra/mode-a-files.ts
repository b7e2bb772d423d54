/** A Mode A evaluation's files on this host: its dir, the split's rows it reads, and the programs' answers. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRegularText } from './bounded-read';

/** Makes the evaluation's dir (model/paths.ts modeAPaths) when it is missing. */
export const ensureModeADir = (dir: string): void => void fs.mkdirSync(dir, { recursive: true });

/** The rows of `<datasetDir>/<split>.jsonl` (blank lines skipped), numbered from 0; a row that is not JSON throws. */
export function readSplitRows<Row>(datasetDir: string, split: string): { i: number; row: Row }[] {
  return fs
    .readFileSync(path.join(datasetDir, `${split}.jsonl`), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => ({ i, row: JSON.parse(l) as Row }));
}

/** A program's answers, one JSON value a line; lines that are not JSON are skipped. */
export function readAnswerLines(file: string): unknown[] {
  const out: unknown[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    try {
      out.push(JSON.parse(line));
    } catch {
      /* not a JSON row */
    }
  }
  return out;
}

/** Empties a harness evaluation's dir and makes its artifacts dir: a retried attempt never reads an earlier report. */
export function freshHarnessDir(dir: string, artifacts: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(artifacts, { recursive: true });
}

/** The largest harness report read (a report is a few metrics and diagnostics). */
const MAX_REPORT_BYTES = 16 << 20;

/**
 * The text of a harness's report; null when it wrote none. The report's dir belongs to the harness's user (and the
 * candidate code it runs): read as a regular file inside `dir` only, bounded (never a FIFO, a device or a link out).
 */
export function readReportText(file: string, dir: string): string | null {
  try {
    return readRegularText(file, { maxBytes: MAX_REPORT_BYTES, within: dir });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}
