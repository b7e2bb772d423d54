/** Plain-text tables for the CLI (the same data is printed as JSON with --json). */
import type { CandidateResult, TaskResult } from '../model/eval-types';
import type { Usage } from '../model/trial-ranking';

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

/** `$0.1234`, or null when no trial reported a cost. */
export const fmtCost = (usd: number | null | undefined): string | null => (usd === null || usd === undefined ? null : `$${usd.toFixed(4)}`);

/** `12.3k in / 4.5k out`, or null when no trial reported tokens. */
export function fmtTokens(u: Usage | undefined): string | null {
  if (!u || (u.inputTokens === null && u.outputTokens === null)) return null;
  const k = (n: number | null) => (n === null ? '-' : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));
  return `${k(u.inputTokens)} in / ${k(u.outputTokens)} out`;
}

/** The note column: the error (with Harbor's exception message), else exceptions, a salvage, or a fresh job. */
export function taskNote(t: TaskResult): string {
  const notes = [
    ...(t.error ? [t.error] : t.exceptions.length ? [t.exceptions.join(',')] : []),
    ...(t.timedOut && !t.error ? ['timed out (salvaged)'] : []),
    ...(t.notes ?? []),
  ];
  return notes.join('; ').slice(0, 160);
}

export function taskTable(tasks: TaskResult[]): string {
  const withUsage = tasks.some((t) => t.usage && (t.usage.costUsd !== null || t.usage.inputTokens !== null));
  return table(
    ['task', 'status', 'score', 'trials', 'runs', 'chosen trial', ...(withUsage ? ['cost', 'tokens'] : []), 'note'],
    tasks.map((t) => [
      t.task,
      t.status,
      fmtScore(t.score),
      t.nTrials,
      t.runs,
      t.trial,
      ...(withUsage ? [fmtCost(t.usage?.costUsd), fmtTokens(t.usage)] : []),
      taskNote(t),
    ]),
  );
}

export function resultSummary(r: CandidateResult): string {
  return [
    `candidate ${r.candidateRef} (${r.candidate})`,
    `status    ${r.status}${r.status === 'failed' ? ` (error rate ${(r.errorRate * 100).toFixed(1)}% ≥ threshold ${(r.errorRateThreshold * 100).toFixed(1)}%)` : ''}`,
    `score     ${fmtScore(r.score)} over ${r.nTasks} task(s)${r.nErrors ? `, ${r.nErrors} error(s) counted as 0 (mean of scored tasks: ${fmtScore(r.scoreOfScored)})` : ''}`,
    ...(r.uncertainty?.ci95
      ? [
          `          95% interval ${fmtScore(r.uncertainty.ci95[0])}–${fmtScore(r.uncertainty.ci95[1])} (standard error ${fmtScore(r.uncertainty.stdErr)}, over tasks)`,
        ]
      : []),
    `scored    ${r.nScored}/${r.nTasks}`,
    ...(r.attempts
      ? [
          `attempts  pass@${r.attempts.k} ${fmtScore(r.attempts.passAtK)}, pass^${r.attempts.k} ${fmtScore(r.attempts.passHatK)} (a trial passes at reward ≥ 1), within-task sd ${fmtScore(r.attempts.withinTaskSd)}`,
        ]
      : []),
    ...(r.usage && (r.usage.costUsd !== null || r.usage.inputTokens !== null)
      ? [`cost      ${fmtCost(r.usage.costUsd) ?? '-'}${fmtTokens(r.usage) ? ` (${fmtTokens(r.usage)} tokens)` : ''}`]
      : []),
    ...(r.harborVersions?.length ? [`harbor    ${r.harborVersions.join(', ')}`] : []),
    ...(r.skippedDirs?.length
      ? [
          `skipped   ${r.skippedDirs.length} dataset dir(s) that are not tasks: ${r.skippedDirs.map((d) => `${d.dir} (${d.reason})`).join(', ')}`,
        ]
      : []),
    `results   ${r.resultFile}`,
  ].join('\n');
}
