/**
 * The HTML views `vero view` serves and `vero report` writes: pages, tables and Chart.js charts (a well-kept
 * charting library, served by the viewer or inlined in the report). Pure functions of the data
 * (client/view-data.ts): every value is escaped, and chart data travels as JSON that cannot close its script.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EvaluationRow, ProgressPoint } from '../client/view-data';
import type { PairedComparison } from '../model/race/paired-comparison';
import { fmtCost, fmtScore } from './format';

export const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A link to a file the viewer serves (its path relative to the home). */
export const fileHref = (rel: string): string => `/file/${rel.split('/').map(encodeURIComponent).join('/')}`;
/** A trial's page (its dir relative to the home), at page `pageNo` of its trajectory. */
export const trialHref = (rel: string, pageNo = 1): string =>
  `/trial/${rel.split('/').map(encodeURIComponent).join('/')}${pageNo > 1 ? `?page=${pageNo}` : ''}`;

/** One task of two evaluations side by side, at page `pageNo` of their trajectories. */
export const pairHref = (a: string, b: string, task: string, pageNo = 1): string =>
  `/pair?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}&task=${encodeURIComponent(task)}${pageNo > 1 ? `&page=${pageNo}` : ''}`;

/** JSON for a <script> element: `<` escaped, so no value can end the element. */
const scriptJson = (v: unknown): string => JSON.stringify(v).replace(/</g, '\\u003c');

/** Chart.js's browser build (UMD), as shipped by the `chart.js` package. */
export const CHART_JS_FILE = path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js');

const COLORS = { score: '#0969da', best: '#1a7f37', baseline: '#8c959f', ci: 'rgba(9,105,218,0.25)', up: '#2da44e', down: '#cf222e' };

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1b1f23;max-width:1200px}h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f6f8fa}
.num{text-align:right}.warn{color:#b35900;font-weight:600}.pass{background:#dafbe1}.part{background:#fff8c5}.fail{background:#ffebe9}
.err{background:#cf222e;color:#fff}.none{color:#8c959f}.note{color:#57606a;font-size:12px}nav a{margin-right:12px}
.verdict{font-weight:600}.verdict.unresolved{color:#9a6700}.verdict.resolved{color:#1a7f37}.chart{position:relative;max-width:900px}
.trials td{font-size:12px}.files a{margin-right:8px}`;

/**
 * A chart: a canvas and its Chart.js config. The page's init script draws every one and marks its canvas
 * `data-rendered` (what the browser tests look for); `window.veroCharts` holds the Chart objects.
 */
export function chartBlock(id: string, ariaLabel: string, config: unknown, height = 320): string {
  return `<div class="chart" style="height:${height}px"><canvas id="${esc(id)}" role="img" aria-label="${esc(ariaLabel)}"></canvas></div>
<script type="application/json" data-chart="${esc(id)}">${scriptJson(config)}</script>`;
}

const CHART_INIT = `<script>
window.veroCharts = {};
for (const el of document.querySelectorAll('script[data-chart]')) {
  const id = el.dataset.chart, canvas = document.getElementById(id), config = JSON.parse(el.textContent);
  config.options = Object.assign({ responsive: true, maintainAspectRatio: false, animation: false }, config.options);
  window.veroCharts[id] = new Chart(canvas, config);
  canvas.dataset.rendered = 'true';
}
</script>`;

/** A whole page. `chartJs`: where the browser gets Chart.js (a URL, or `inline` for a self-contained file). */
export function page(opts: { title: string; body: string; chartJs?: string | 'inline'; nav?: string; style?: string }): string {
  const charts = opts.body.includes('data-chart=');
  const lib =
    !charts || !opts.chartJs
      ? ''
      : opts.chartJs === 'inline'
        ? `<script>${fs.readFileSync(CHART_JS_FILE, 'utf8').replace(/<\/script/gi, '<\\/script')}</script>`
        : `<script src="${esc(opts.chartJs)}"></script>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(opts.title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}${opts.style ?? ''}</style>${lib}</head><body>
${opts.nav ? `<nav>${opts.nav}</nav>` : ''}<h1>${esc(opts.title)}</h1>
${opts.body}
${charts ? CHART_INIT : ''}
</body></html>
`;
}

export function cellClass(score: number | null, status: string): string {
  if (status === 'error') return 'err';
  if (status === 'not_run' || score === null) return 'none';
  return score >= 1 ? 'pass' : score > 0 ? 'part' : 'fail';
}

/** Score per candidate in commit order, its 95% interval, the best so far and the baseline (the first). */
export function progressChart(points: ProgressPoint[], baseline: number | null): string {
  const labels = points.map((p) => p.label);
  const config = {
    type: 'line',
    data: {
      labels,
      datasets: [
        { label: 'score', data: points.map((p) => p.score), borderColor: COLORS.score, backgroundColor: COLORS.score, pointRadius: 4 },
        { label: 'best so far', data: points.map((p) => p.bestSoFar), borderColor: COLORS.best, stepped: true, pointRadius: 0 },
        ...(baseline !== null
          ? [{ label: 'baseline', data: points.map(() => baseline), borderColor: COLORS.baseline, borderDash: [6, 4], pointRadius: 0 }]
          : []),
        { type: 'bar', label: '95% interval', data: points.map((p) => p.ci95 ?? null), backgroundColor: COLORS.ci, maxBarThickness: 16 },
      ],
    },
    options: { scales: { y: { min: 0, max: 1, title: { display: true, text: 'score' } } } },
  };
  return chartBlock('progress', 'score per candidate in commit order, with the best so far and the baseline', config);
}

/** At most this many per-task deltas are drawn (the largest); the rest are counted. */
const MAX_DELTAS_DRAWN = 40;

/** Per-task deltas (B − A) as bars, and the mean delta's 95% interval as the last bar. */
export function deltaChart(c: PairedComparison, labelA: string, labelB: string): string {
  const changed = c.deltas.filter((d) => d.delta !== 0).sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta));
  const shown = changed.slice(0, MAX_DELTAS_DRAWN).sort((x, y) => y.delta - x.delta);
  const meanLabel = 'mean (95% CI)';
  const config = {
    type: 'bar',
    data: {
      labels: [...shown.map((d) => d.task), meanLabel],
      datasets: [
        {
          label: `${labelB} − ${labelA}`,
          data: [...shown.map((d) => d.delta), null],
          backgroundColor: [...shown.map((d) => (d.delta > 0 ? COLORS.up : COLORS.down)), COLORS.score],
        },
        {
          label: 'mean delta, 95% interval',
          data: [...shown.map(() => null), c.ci95 ?? [c.meanDelta, c.meanDelta]],
          backgroundColor: COLORS.ci,
        },
      ],
    },
    options: { indexAxis: 'y', scales: { x: { min: -1, max: 1 }, y: { stacked: true } } },
  };
  const note = changed.length > shown.length ? `<p class="note">${changed.length - shown.length} smaller change(s) not drawn.</p>` : '';
  const unchanged = c.n - changed.length;
  return `${chartBlock('deltas', `per-task deltas, ${labelB} minus ${labelA}`, config, Math.max(160, 26 * (shown.length + 1) + 60))}
<p class="note">${unchanged} task(s) unchanged.</p>${note}`;
}

/** The comparison in words: mean delta, interval, flips, McNemar and the verdict in the candidates' names. */
export function comparisonText(c: PairedComparison, la: string, lb: string): string {
  const ci = c.ci95 ? ` (95% CI [${c.ci95[0].toFixed(3)}, ${c.ci95[1].toFixed(3)}], paired bootstrap)` : '';
  const verdict = c.summary.replace(/^B better/, `${lb} better`).replace(/^A better/, `${la} better`);
  return `<p><b>${esc(lb)}</b> against <b>${esc(la)}</b> on the ${c.n} task(s) both evaluated: mean delta ${c.meanDelta >= 0 ? '+' : ''}${c.meanDelta.toFixed(3)}${esc(ci)}; ${c.flippedToPass.length} task(s) flipped to pass, ${c.flippedToFail.length} to fail (exact McNemar p = ${c.mcnemar.pValue.toPrecision(3)}).</p>
<p class="verdict ${c.verdict === 'not resolved' ? 'unresolved' : 'resolved'}">${esc(verdict)}</p>`;
}

export const fmtCi = (ci: [number, number] | null): string => (ci ? `${ci[0].toFixed(3)}–${ci[1].toFixed(3)}` : '–');
/** A cost for a table cell (cli/format.ts's, a dash when no trial reported one). */
export const fmtUsd = (n: number | null | undefined): string => fmtCost(n) ?? '–';

/** The evaluations table, with a text filter and a status filter (in the page). */
export function evaluationsTable(rows: EvaluationRow[], hrefOf: (r: EvaluationRow) => string, label: (r: EvaluationRow) => string): string {
  const statuses = [...new Set(rows.map((r) => r.status))].sort();
  const body = rows
    .map(
      (r) =>
        `<tr data-status="${esc(r.status)}"><td><a href="${esc(hrefOf(r))}">${esc(label(r))}</a></td><td class="num">${fmtScore(r.score)}</td><td class="num">${fmtCi(r.ci95)}</td><td>${esc(r.status)}</td><td class="num">${r.nScored ?? '–'}/${r.nTasks ?? '–'}</td><td class="num${r.nErrors ? ' warn' : ''}">${r.nErrors ?? '–'}</td><td class="num">${fmtUsd(r.costUsd)}</td><td>${esc(r.startedAt.replace('T', ' ').slice(0, 19))}</td><td class="note">${esc(r.evalId)}</td></tr>`,
    )
    .join('\n');
  return `<p><label>filter <input id="filter" type="search" placeholder="candidate, id…"></label>
<label>status <select id="status"><option value="">all</option>${statuses.map((s) => `<option>${esc(s)}</option>`).join('')}</select></label></p>
<table id="evaluations"><thead><tr><th>candidate</th><th>score</th><th>95% interval</th><th>status</th><th>scored</th><th>errors</th><th>cost</th><th>started (UTC)</th><th>evaluation</th></tr></thead><tbody>
${body}
</tbody></table>
<script>
const filterRows = () => {
  const q = document.getElementById('filter').value.toLowerCase(), s = document.getElementById('status').value;
  for (const tr of document.querySelectorAll('#evaluations tbody tr'))
    tr.hidden = !(tr.textContent.toLowerCase().includes(q) && (!s || tr.dataset.status === s));
};
document.getElementById('filter').addEventListener('input', filterRows);
document.getElementById('status').addEventListener('change', filterRows);
</script>`;
}
