/** A Mode A evaluation's files on this host: its dir, the split's rows it reads, and the programs' answers. */
import * as fs from 'node:fs';
import * as path from 'node:path';

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

/** The text of a harness's report; null when it wrote none. */
export const readReportText = (file: string): string | null => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null);
