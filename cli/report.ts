/**
 * `vero report`: one self-contained HTML page comparing candidates: score per candidate (an inline SVG chart),
 * a per-task pass/fail matrix, error counts, and links to the Temporal Web UI. Pure rendering: data in, HTML out.
 */
import type { CandidateResult } from '../model/eval-types';
import { fmtCost } from './format';

const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function cellClass(score: number | null, status: string): string {
  if (status === 'error') return 'err';
  if (score === null) return 'none';
  return score >= 1 ? 'pass' : score > 0 ? 'part' : 'fail';
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
          return `<td class="${cellClass(t.score, t.status)}" title="${esc(title)}">${t.status === 'error' ? 'error' : (t.score ?? 0).toFixed(2)}</td>`;
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
</style></head><body>
<h1>${esc(title)}</h1>
<p class="note">${ranked.length} candidate(s), ${tasks.length} task(s). Scores are means over all tasks with errors counted as 0. Generated ${esc(opts.generatedAt)}.</p>
<h2>Score per candidate</h2>
<svg role="img" aria-label="score per candidate" width="${200 + barW + 60}" height="${Math.max(28, ranked.length * 28)}">${chart}</svg>
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
