/**
 * `vero report`: one self-contained HTML page comparing candidates: score per candidate (an inline SVG chart),
 * the best against the runner-up as a paired comparison (per-task deltas and the mean delta's interval, as in
 * `vero compare`), a per-task pass/fail matrix, error counts, and links to the Temporal Web UI. Pure rendering:
 * data in, HTML out.
 */
import type { CandidateResult } from '../model/eval-types';
import { comparePaired, type PairedComparison, taskScoresOf } from '../model/paired-comparison';
import { fmtCost } from './format';

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function cellClass(score: number | null, status: string): string {
  if (status === 'error') return 'err';
  if (status === 'not_run' || score === null) return 'none';
  return score >= 1 ? 'pass' : score > 0 ? 'part' : 'fail';
}

/** At most this many per-task deltas are drawn (the largest); the rest are counted. */
const MAX_DELTA_ROWS = 40;

/**
 * The paired comparison as a plot: one bar per task whose score changed (right and green: B better), and the
 * mean delta with its 95% interval on top, all on one axis from −1 to 1 around zero.
 */
function deltaPlot(c: PairedComparison, labelA: string, labelB: string): string {
  const changed = c.deltas
    .filter((d) => d.delta !== 0)
    .sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta) || x.task.localeCompare(y.task));
  const shown = changed.slice(0, MAX_DELTA_ROWS);
  const half = 180;
  const x0 = 220 + half;
  const at = (v: number) => x0 + Math.max(-1, Math.min(1, v)) * half;
  const rowH = 22;
  const top = 34;
  const rows = shown
    .map((d, i) => {
      const y = top + i * rowH;
      const [x1, x2] = [at(Math.min(0, d.delta)), at(Math.max(0, d.delta))];
      return `<g class="delta ${d.delta > 0 ? 'up' : 'down'}"><title>${esc(d.task)}: ${d.a.toFixed(3)} → ${d.b.toFixed(3)}</title><text x="0" y="${y + 15}" class="lbl">${esc(d.task)}</text><rect x="${x1.toFixed(1)}" y="${y + 4}" width="${Math.max(1, x2 - x1).toFixed(1)}" height="14"/><text x="${(d.delta > 0 ? x2 + 4 : x1 - 4).toFixed(1)}" y="${y + 15}" class="val" text-anchor="${d.delta > 0 ? 'start' : 'end'}">${d.delta > 0 ? '+' : ''}${d.delta.toFixed(2)}</text></g>`;
    })
    .join('');
  const ci = c.ci95
    ? `<line class="ci" x1="${at(c.ci95[0]).toFixed(1)}" x2="${at(c.ci95[1]).toFixed(1)}" y1="14" y2="14"/><line class="ci" x1="${at(c.ci95[0]).toFixed(1)}" x2="${at(c.ci95[0]).toFixed(1)}" y1="8" y2="20"/><line class="ci" x1="${at(c.ci95[1]).toFixed(1)}" x2="${at(c.ci95[1]).toFixed(1)}" y1="8" y2="20"/>`
    : '';
  const height = top + shown.length * rowH + 24;
  return `<svg role="img" aria-label="per-task deltas, ${esc(labelB)} minus ${esc(labelA)}" width="${x0 + half + 60}" height="${height}">
<text x="0" y="18" class="lbl">mean delta (95% CI)</text>${ci}<circle class="mean" cx="${at(c.meanDelta).toFixed(1)}" cy="14" r="4"/>
<line class="axis" x1="${x0}" x2="${x0}" y1="4" y2="${height - 18}"/>${rows}
<text x="${x0 - 6}" y="${height - 4}" class="val" text-anchor="end">← ${esc(labelA)} better</text><text x="${x0 + 6}" y="${height - 4}" class="val">${esc(labelB)} better →</text>
</svg>${changed.length > shown.length ? `<p class="note">${changed.length - shown.length} smaller change(s) not drawn.</p>` : ''}`;
}

/** The best candidate against the runner-up, as `vero compare RUNNER-UP BEST` reports it. */
function comparisonSection(best: CandidateResult, runnerUp: CandidateResult, label: (r: CandidateResult) => string): string {
  const c = comparePaired(taskScoresOf(runnerUp), taskScoresOf(best));
  const [la, lb] = [label(runnerUp), label(best)];
  const ci = c.ci95 ? ` (95% CI [${c.ci95[0].toFixed(3)}, ${c.ci95[1].toFixed(3)}], paired bootstrap)` : '';
  return `<h2>Best vs runner-up</h2>
<p><b>${esc(lb)}</b> against <b>${esc(la)}</b> on the ${c.n} task(s) both evaluated: mean delta ${c.meanDelta >= 0 ? '+' : ''}${c.meanDelta.toFixed(3)}${esc(ci)}; ${c.flippedToPass.length} task(s) flipped to pass, ${c.flippedToFail.length} to fail (exact McNemar p = ${c.mcnemar.pValue.toPrecision(3)}).</p>
<p class="verdict ${c.verdict === 'not resolved' ? 'unresolved' : 'resolved'}">${esc(c.summary.replace(/^B better/, `${lb} better`).replace(/^A better/, `${la} better`))}</p>
${deltaPlot(c, la, lb)}`;
}

export function renderReport(
  results: CandidateResult[],
  opts: { title?: string; uiLink?: (evalId: string) => string | null; generatedAt: string },
): string {
  const ranked = [...results].sort((a, b) => b.score - a.score || a.nErrors - b.nErrors || a.startedAt.localeCompare(b.startedAt));
  const tasks = [...new Set(ranked.flatMap((r) => (r.tasks ?? []).map((t) => t.task)))].sort();
  const label = (r: CandidateResult) =>
    `${r.candidateRef === r.candidate ? r.candidate.slice(0, 12) : r.candidateRef} (${r.candidate.slice(0, 8)})`;
  const barW = 360;
  const chart = ranked
    .map((r, i) => {
      const y = i * 28;
      const w = Math.max(1, Math.round(r.score * barW));
      return `<g transform="translate(0,${y})"><text x="0" y="17" class="lbl">${esc(label(r))}</text><rect x="200" y="4" width="${w}" height="18" class="bar${r.status === 'failed' ? ' failed' : ''}"/><text x="${206 + w}" y="17" class="val">${r.score.toFixed(3)}</text></g>`;
    })
    .join('');
  const summaryRows = ranked
    .map((r) => {
      const link = opts.uiLink?.(r.evalId);
      return `<tr><td>${esc(label(r))}</td><td class="num">${r.score.toFixed(3)}</td><td class="num">${r.nScored}/${r.nTasks}</td><td class="num${r.nErrors ? ' warn' : ''}">${r.nErrors}</td><td class="num">${esc(fmtCost(r.usage?.costUsd) ?? '–')}</td><td>${esc(r.status)}</td><td>${link ? `<a href="${esc(link)}">${esc(r.evalId)}</a>` : esc(r.evalId)}</td></tr>`;
    })
    .join('\n');
  const matrix = tasks
    .map((task) => {
      const cells = ranked
        .map((r) => {
          const t = (r.tasks ?? []).find((x) => x.task === task);
          if (!t) return '<td class="none">–</td>';
          const title = t.error ?? (t.exceptions.length ? t.exceptions.join(', ') : `trial ${t.trial ?? ''}`);
          return `<td class="${cellClass(t.score, t.status)}" title="${esc(title)}">${t.status === 'error' ? 'error' : t.status === 'not_run' ? 'not run' : (t.score ?? 0).toFixed(2)}</td>`;
        })
        .join('');
      return `<tr><th scope="row">${esc(task)}</th>${cells}</tr>`;
    })
    .join('\n');
  const title = opts.title ?? 'vero-harbor: candidate comparison';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1f23}h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left}th{background:#f6f8fa}
.num{text-align:right}.warn{color:#b35900;font-weight:600}svg .lbl{font-size:12px}svg .val{font-size:12px;fill:#57606a}
svg .bar{fill:#2da44e}svg .bar.failed{fill:#cf222e}.pass{background:#dafbe1}.part{background:#fff8c5}.fail{background:#ffebe9}
.err{background:#cf222e;color:#fff}.none{color:#8c959f}.note{color:#57606a;font-size:12px}
svg .delta.up rect{fill:#2da44e}svg .delta.down rect{fill:#cf222e}svg .axis{stroke:#8c959f}svg .ci{stroke:#0969da;stroke-width:2}
svg .mean{fill:#0969da}.verdict{font-weight:600}.verdict.unresolved{color:#9a6700}.verdict.resolved{color:#1a7f37}
</style></head><body>
<h1>${esc(title)}</h1>
<p class="note">${ranked.length} candidate(s), ${tasks.length} task(s). Scores are means over all tasks with errors counted as 0. Generated ${esc(opts.generatedAt)}.</p>
<h2>Score per candidate</h2>
<svg role="img" aria-label="score per candidate" width="${200 + barW + 60}" height="${Math.max(28, ranked.length * 28)}">${chart}</svg>
${ranked.length >= 2 ? comparisonSection(ranked[0]!, ranked[1]!, label) : ''}
<h2>Candidates</h2>
<table><thead><tr><th>candidate</th><th>score</th><th>scored</th><th>errors</th><th>cost</th><th>status</th><th>evaluation (Web UI)</th></tr></thead><tbody>
${summaryRows}
</tbody></table>
<h2>Tasks × candidates</h2>
<table class="matrix"><thead><tr><th>task</th>${ranked.map((r) => `<th>${esc(label(r))}</th>`).join('')}</tr></thead><tbody>
${matrix}
</tbody></table>
</body></html>
`;
}
