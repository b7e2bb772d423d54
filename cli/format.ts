/** Plain-text tables for the CLI (the same data is printed as JSON with --json). */
import { attemptHealth } from '../model/evaluation/attempt-health';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import type { TaskResult } from '../model/evaluation/task-result';
import type { Usage } from '../model/harbor/trial-ranking';

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
function fmtTokens(u: Usage | undefined): string | null {
  if (!u || (u.inputTokens === null && u.outputTokens === null)) return null;
  const k = (n: number | null) => (n === null ? '-' : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n));
  return `${k(u.inputTokens)} in / ${k(u.outputTokens)} out`;
}

/** `2 trial(s) with a reward that is not valid: ApiRateLimitError (…)`, or null when none. */
export function invalidTrialsNote(t: Pick<TaskResult, 'nInvalidTrials' | 'invalidReasons'>): string | null {
  if (!t.nInvalidTrials) return null;
  return `${t.nInvalidTrials} trial(s) with a reward that is not valid, not scored: ${(t.invalidReasons ?? []).join(', ')}`;
}

/**
 * The note column: the error (with Harbor's exception message), else the trials not valid and exceptions, a
 * salvage, or a fresh job.
 */
export function taskNote(t: TaskResult): string {
  const invalid = invalidTrialsNote(t);
  const notes = [
    ...(t.error ? [t.error] : [...(invalid ? [invalid] : []), ...(t.exceptions.length ? [t.exceptions.join(',')] : [])]),
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

function statusLine(r: CandidateResult): string {
  if (r.status === 'failed')
    return `failed (error rate ${(r.errorRate * 100).toFixed(1)}% ≥ threshold ${(r.errorRateThreshold * 100).toFixed(1)}%)`;
  if (r.status === 'budget_exhausted')
    return `budget_exhausted (${r.spend?.reached ?? 'a spend cap was reached'}; partial: not ranked by vero best)`;
  return r.status;
}

/** `max_cost_usd $5.00, max_tokens 100000`: the caps that are set. */
export function capsText(c: { maxCostUsd: number | null; maxTokens: number | null }): string {
  return [
    ...(c.maxCostUsd !== null ? [`max_cost_usd $${c.maxCostUsd.toFixed(2)}`] : []),
    ...(c.maxTokens !== null ? [`max_tokens ${c.maxTokens}`] : []),
  ].join(', ');
}

/** `max_cost_usd $5.00: $5.1234 spent, 1200 tokens (2 task(s) reported no usage)`. */
function spendLine(r: CandidateResult): string | null {
  const sp = r.spend;
  if (!sp) return null;
  const caps = capsText(sp);
  const unmetered = sp.spent.unmetered ? ` (${sp.spent.unmetered} task(s) reported no cost or tokens: the cap cannot see them)` : '';
  return `${caps}${sp.pool ? ` of spend pool ${sp.pool}` : ''}: this evaluation spent $${sp.spent.costUsd.toFixed(4)}, ${sp.spent.tokens} tokens${unmetered}`;
}

/** Attempt health (model/evaluation/attempt-health.ts) of an evaluation's trials: shown when any attempt measured nothing. */
function healthLines(r: CandidateResult): string[] {
  const h = attemptHealth(
    (r.tasks ?? []).map((t) => ({
      trials: t.nTrials,
      dead: t.nTrials - (t.trialRewards?.length ?? t.nTrials),
      inputTokens: t.usage?.inputTokens ?? null,
      outputTokens: t.usage?.outputTokens ?? null,
    })),
  );
  if (h.n_starved + h.n_dead === 0) return [];
  return [
    `attempts  unmeasured ${fmtScore(h.unmeasured_attempt_rate)} (starved ${fmtScore(h.starved_attempt_rate)}, dead ${fmtScore(h.dead_infra_attempt_rate)}) of ${h.n_attempts}${h.warning ? `\nwarning   ${h.warning}` : ''}`,
  ];
}

export function resultSummary(r: CandidateResult): string {
  const nRun = r.nRun ?? r.nTasks;
  const notRun = r.nTasks - nRun;
  return [
    `candidate ${r.candidateRef} (${r.candidate})`,
    `status    ${statusLine(r)}`,
    `score     ${fmtScore(r.score)} over ${notRun ? `the ${nRun} of ${r.nTasks} task(s) that ran (${notRun} not run)` : `${r.nTasks} task(s)`}${r.nErrors ? `, ${r.nErrors} error(s) counted as 0 (mean of scored tasks: ${fmtScore(r.scoreOfScored)})` : ''}`,
    ...(r.uncertainty?.ci95
      ? [
          `          95% interval ${fmtScore(r.uncertainty.ci95[0])}–${fmtScore(r.uncertainty.ci95[1])} (standard error ${fmtScore(r.uncertainty.stdErr)}, over tasks)`,
        ]
      : []),
    `scored    ${r.nScored}/${nRun}${notRun ? ` (${notRun} not run)` : ''}`,
    ...(spendLine(r) ? [`spend     ${spendLine(r)}`] : []),
    ...(r.attempts
      ? [
          `attempts  pass@${r.attempts.k} ${fmtScore(r.attempts.passAtK)}, pass^${r.attempts.k} ${fmtScore(r.attempts.passHatK)} (a trial passes at reward ≥ 1), within-task sd ${fmtScore(r.attempts.withinTaskSd)}`,
        ]
      : []),
    ...(r.usage && (r.usage.costUsd !== null || r.usage.inputTokens !== null)
      ? [`cost      ${fmtCost(r.usage.costUsd) ?? '-'}${fmtTokens(r.usage) ? ` (${fmtTokens(r.usage)} tokens)` : ''}`]
      : []),
    ...healthLines(r),
    ...(r.harborVersions?.length ? [`harbor    ${r.harborVersions.join(', ')}`] : []),
    ...(r.nInvalidTrials
      ? [`invalid   ${r.nInvalidTrials} trial(s) with a reward Harbor's error policy marks not valid (never scored; see the rows)`]
      : []),
    ...(r.skippedDirs?.length
      ? [
          `skipped   ${r.skippedDirs.length} dataset dir(s) that are not tasks: ${r.skippedDirs.map((d) => `${d.dir} (${d.reason})`).join(', ')}`,
        ]
      : []),
    `results   ${r.resultFile}`,
  ].join('\n');
}
