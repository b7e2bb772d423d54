/** Plain-text tables for the CLI (the same data is printed as JSON with --json). */
import type { CandidateResult, TaskResult } from '../core/eval-types';

export function table(headers: string[], rows: (string | number | null)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(cells[0]!), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n');
}

export const fmtScore = (n: number | null | undefined): string => (n === null || n === undefined ? '-' : n.toFixed(3));

export function taskTable(tasks: TaskResult[]): string {
  return table(
    ['task', 'status', 'score', 'trials', 'runs', 'chosen trial', 'note'],
    tasks.map((t) => [
      t.task,
      t.status,
      fmtScore(t.score),
      t.nTrials,
      t.runs,
      t.trial,
      t.error ? t.error.slice(0, 80) : t.exceptions.length ? t.exceptions.join(',') : t.timedOut ? 'timed out (salvaged)' : '',
    ]),
  );
}

export function resultSummary(r: CandidateResult): string {
  return [
    `candidate ${r.candidateRef} (${r.candidate})`,
    `status    ${r.status}${r.status === 'failed' ? ` (error rate ${(r.errorRate * 100).toFixed(1)}% ≥ threshold ${(r.errorRateThreshold * 100).toFixed(1)}%)` : ''}`,
    `score     ${fmtScore(r.score)} over ${r.nTasks} task(s)${r.nErrors ? `, ${r.nErrors} error(s) counted as 0 (mean of scored tasks: ${fmtScore(r.scoreOfScored)})` : ''}`,
    `scored    ${r.nScored}/${r.nTasks}`,
    `results   ${r.resultFile}`,
  ].join('\n');
}
