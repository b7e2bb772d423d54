/**
 * `vero report`: one self-contained HTML page (Chart.js inlined) with the views `vero view` serves
 * (cli/views.ts): score per candidate, the optimization's progress, the best against the runner-up, a tasks ×
 * candidates matrix, errors, cost and Web UI links.
 */
import { labelOf, progressSeries, type EvaluationRow } from '../client/view-data';
import { type CandidateResult, rankResults } from '../model/evaluation/candidate-result';
import { comparePaired, taskScoresOf } from '../model/race/paired-comparison';
import { fmtCost, invalidTrialsNote } from './format';
import { cellClass, chartBlock, comparisonText, deltaChart, esc, page, progressChart } from './views';

/** A result as a row of the evaluations views (its progress point is in evaluation order: no repo here). */
const rowOf = (r: CandidateResult): EvaluationRow => ({
  evalId: r.evalId,
  candidate: r.candidate,
  candidateRef: r.candidateRef,
  status: r.status,
  workflowStatus: 'COMPLETED',
  score: r.score,
  ci95: r.uncertainty?.ci95 ?? null,
  nTasks: r.nTasks,
  nScored: r.nScored,
  nErrors: r.nErrors,
  costUsd: r.usage?.costUsd ?? null,
  startedAt: r.startedAt,
  commitTime: null,
});

function scoreChart(ranked: CandidateResult[]): string {
  const config = {
    type: 'bar',
    data: {
      labels: ranked.map(labelOf),
      datasets: [
        {
          label: 'score',
          data: ranked.map((r) => r.score),
          backgroundColor: ranked.map((r) => (r.status === 'completed' ? '#2da44e' : '#cf222e')),
        },
      ],
    },
    options: { indexAxis: 'y', scales: { x: { min: 0, max: 1 } }, plugins: { legend: { display: false } } },
  };
  return chartBlock('scores', 'score per candidate', config, Math.max(120, ranked.length * 30 + 50));
}

function comparisonSection(best: CandidateResult, runnerUp: CandidateResult): string {
  const c = comparePaired(taskScoresOf(runnerUp), taskScoresOf(best));
  const [la, lb] = [labelOf(runnerUp), labelOf(best)];
  return `<h2>Best vs runner-up</h2>
${comparisonText(c, la, lb)}
${deltaChart(c, la, lb)}`;
}

function matrix(ranked: CandidateResult[], tasks: string[]): string {
  const rows = tasks.map((task) => {
    const cells = ranked.map((r) => {
      const t = (r.tasks ?? []).find((x) => x.task === task);
      if (!t) return '<td class="none">–</td>';
      const title = [
        t.error ?? (t.exceptions.length ? t.exceptions.join(', ') : `trial ${t.trial ?? ''}`),
        ...(t.error ? [] : [invalidTrialsNote(t) ?? []].flat()),
      ].join('; ');
      const shown = t.status === 'error' ? 'error' : t.status === 'not_run' ? 'not run' : (t.score ?? 0).toFixed(2);
      return `<td class="${cellClass(t.score, t.status)}" title="${esc(title)}">${shown}</td>`;
    });
    return `<tr><th scope="row">${esc(task)}</th>${cells.join('')}</tr>`;
  });
  return `<table class="matrix"><thead><tr><th>task</th>${ranked.map((r) => `<th>${esc(labelOf(r))}</th>`).join('')}</tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`;
}

export function renderReport(
  results: CandidateResult[],
  opts: { title?: string; uiLink?: (evalId: string) => string | null; generatedAt: string },
): string {
  // The ranked evaluations first (best, runner-up, …), then the spend caps' partial ones, which are not ranked.
  const ranked = [...rankResults(results), ...results.filter((r) => r.status === 'budget_exhausted')];
  const tasks = [...new Set(ranked.flatMap((r) => (r.tasks ?? []).map((t) => t.task)))].sort();
  const { points, baseline } = progressSeries(results.map(rowOf));
  const summaryRows = ranked.map((r) => {
    const link = opts.uiLink?.(r.evalId);
    return `<tr><td>${esc(labelOf(r))}</td><td class="num">${r.score.toFixed(3)}</td><td class="num">${r.nScored}/${r.nTasks}</td><td class="num${r.nErrors ? ' warn' : ''}">${r.nErrors}</td><td class="num${r.nInvalidTrials ? ' warn' : ''}">${r.nInvalidTrials ?? 0}</td><td class="num">${esc(fmtCost(r.usage?.costUsd) ?? '–')}</td><td>${esc(r.status)}</td><td>${link ? `<a href="${esc(link)}">${esc(r.evalId)}</a>` : esc(r.evalId)}</td></tr>`;
  });
  return page({
    title: opts.title ?? 'vero-harbor: candidate comparison',
    chartJs: 'inline',
    body: `<p class="note">${ranked.length} candidate(s), ${tasks.length} task(s). Scores are means over the tasks that ran, errors counted as 0. Generated ${esc(opts.generatedAt)}.</p>
<h2>Score per candidate</h2>
${scoreChart(ranked)}
${points.length >= 2 ? `<h2>Progress over candidates</h2>\n${progressChart(points, baseline)}\n<p class="note">In the order they were evaluated; baseline: ${esc(points[0]!.label)}.</p>` : ''}
${ranked.length >= 2 ? comparisonSection(ranked[0]!, ranked[1]!) : ''}
<h2>Candidates</h2>
<table><thead><tr><th>candidate</th><th>score</th><th>scored</th><th>errors</th><th title="trials whose reward Harbor's error policy marks not valid: never scored">invalid trials</th><th>cost</th><th>status</th><th>evaluation (Web UI)</th></tr></thead><tbody>
${summaryRows.join('\n')}
</tbody></table>
<h2>Tasks × candidates</h2>
${matrix(ranked, tasks)}`,
  });
}
