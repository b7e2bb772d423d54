/**
 * A compiled task's sidecar session drawn (`vero view --session DIR`, cli/view-session-data.ts): every optimizer
 * evaluation the sidecar recorded, with where and why early stop ended it, and per early-stopping evaluation its
 * sequence — the mean of candidate − incumbent over the cases paired (line), the sequence's upper end (the bound
 * the stop is decided on), 0 and the margin as rules, and a marker where it stopped with the verdict's words.
 * Static SVG: no script. Every value is escaped.
 */
import type { EvalRecord } from '../sidecar/registry';
import type { EarlyStopView, SessionView } from './view-session-data';
import { fmt, frame, H, PAD, scales, W } from './view-race';
import { esc, page } from './views';

/** The marker where the evaluation stopped (after `t` paired cases) and the verdict's words. */
function stopMarker(x: number, t: number, nAsked: number): string {
  const label = `stopped after ${t} of ${nAsked} case(s)`;
  return `<g class="stopped" data-t="${t}"><line x1="${fmt(x)}" x2="${fmt(x)}" y1="${PAD.top}" y2="${H - PAD.bottom}"/><text x="${fmt(Math.min(x + 4, W - 170))}" y="${PAD.top + 12}">${esc(label)}</text></g>`;
}

/** One evaluation's sequence against the incumbent over the cases it paired. */
function stopChart(s: EarlyStopView, i: number): string {
  const v = s.verdict!;
  const pts = s.path;
  const lo = Math.min(-0.2, ...pts.map((p) => p.meanDiff));
  const hi = Math.max(0.2, v.margin + 0.05, ...pts.map((p) => Math.min(p.upper, 1)));
  const { x, y } = scales(s.nAsked, lo, hi);
  const line = (f: (p: (typeof pts)[number]) => number) => pts.map((p) => `${fmt(x(p.t))},${fmt(y(Math.min(f(p), hi)))}`).join(' ');
  const margin = `<line class="margin" data-margin="${v.margin}" x1="${fmt(x(0))}" x2="${fmt(x(s.nAsked))}" y1="${fmt(y(v.margin))}" y2="${fmt(y(v.margin))}"/><text x="${fmt(x(s.nAsked) - 70)}" y="${fmt(y(v.margin) - 4)}">margin ${esc(v.margin)}</text>`;
  const marker = v.stopped_at !== null ? stopMarker(x(v.stopped_at), v.stopped_at, s.nAsked) : '';
  return `<svg class="stop-sequence" id="stop-chart-${i}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(`${s.commit.slice(0, 12)}: mean difference to the incumbent with its sequence's upper end`)}">
${frame(s.nAsked, lo, hi, 0, 'cases')}${margin}<polyline class="upper" points="${line((p) => p.upper)}"/><polyline class="mean" points="${line((p) => p.meanDiff)}"/>${marker}</svg>`;
}

/** What was run of what was asked, and what was refunded. */
function countsOf(s: EarlyStopView): string {
  const v = s.verdict;
  if (!v) return `${s.nRun} of ${s.nAsked} case(s) run so far (no verdict yet: it is running, or its sidecar stopped mid-way)`;
  return `${v.n_cases_run} of ${v.n_cases_asked} case(s) run, ${v.n_cases_refunded} refunded; ${(100 * v.confidence).toFixed(0)}% confidence, margin ${v.margin}`;
}

function stopBlock(s: EarlyStopView, i: number): string {
  const v = s.verdict;
  const drawn = v && s.path.length > 0;
  const note = !v
    ? ''
    : !drawn
      ? '<p class="note">No sequence to draw: no case was paired with an incumbent.</p>'
      : s.matchesVerdict
        ? ''
        : '<p class="warn">The replayed sequence does not end at the recorded verdict (the build is read differently here): the verdict above is the record; the drawing is indicative.</p>';
  return `<section class="stop${v?.stopped ? ' was-stopped' : ''}" id="stop-${i}"><h2>${esc(s.commit.slice(0, 12))} on ${esc(s.split)} <small>against ${esc(s.incumbent?.slice(0, 12) ?? 'no incumbent')}</small></h2>
<p class="counts">${esc(countsOf(s))}</p>
<p class="why">${esc(v?.why ?? '')}</p>
${note}${drawn ? stopChart(s, i) : ''}</section>`;
}

function earlyStopCell(r: EvalRecord): string {
  const e = r.early_stop;
  if (!e) return '–';
  return e.stopped ? `stopped after ${e.n_cases_run} of ${e.n_cases_asked}` : `ran every case (${e.n_cases_run})`;
}

function evaluationsTable(rows: EvalRecord[]): string {
  const body = rows
    .map(
      (r) =>
        `<tr${r.early_stop?.stopped ? ' class="was-stopped"' : ''}><td class="num">${r.seq}</td><td>${esc(r.commit.slice(0, 12))}</td><td>${esc(r.split)}</td><td class="num">${r.n_samples}</td><td class="num">${esc(r.mean_score.toFixed(3))}</td><td>${r.full_split ? 'yes' : 'no'}</td><td>${esc(r.admin ? 'finalize' : 'optimizer')}</td><td>${esc(earlyStopCell(r))}</td><td>${esc(r.invalid ?? '')}</td><td>${esc(r.evaluated_at.replace('T', ' ').slice(0, 19))}</td></tr>`,
    )
    .join('\n');
  return `<table id="session-evaluations"><thead><tr><th>#</th><th>commit</th><th>split</th><th>cases</th><th>mean</th><th>full split</th><th>by</th><th>early stop</th><th>not a score</th><th>evaluated (UTC)</th></tr></thead><tbody>
${body}
</tbody></table>`;
}

/** The session's page: its evaluations, then each early-stopping evaluation's sequence. */
export function sessionPage(s: SessionView, nav = ''): string {
  const stopped = s.stops.filter((x) => x.verdict?.stopped);
  const refunded = stopped.reduce((n, x) => n + (x.verdict?.n_cases_refunded ?? 0), 0);
  return page({
    title: 'sidecar session',
    nav,
    style: `svg.stop-sequence{display:block;margin:4px 0 16px}svg .upper{fill:none;stroke:#9a6700;stroke-width:2}svg .mean{fill:none;stroke:#1f5fbf;stroke-width:2}
svg .axis{stroke:#555}svg .zero{stroke:#888;stroke-dasharray:4 3}svg .margin{stroke:#b00;stroke-dasharray:2 3}
svg .stopped line{stroke:#b00;stroke-width:2}svg text{font:11px sans-serif;fill:#333}tr.was-stopped td{background:#fff8c5}`,
    body: `<p class="note">${esc(s.dir)}</p>
<p id="session-summary">${s.evaluations.length} evaluation(s) recorded; ${s.stops.length} with early stop, ${stopped.length} stopped early (${refunded} unrun case(s) refunded).</p>
${s.problems.length ? `<ul id="problems">${s.problems.map((p) => `<li class="warn">${esc(p)}</li>`).join('')}</ul>` : ''}
<h2>Evaluations</h2>
${s.evaluations.length ? evaluationsTable(s.evaluations) : '<p class="note">No evaluation recorded (no candidates.json).</p>'}
<h2>Early stop</h2>
<p class="note">Each chart: mean(candidate − incumbent) over the cases paired so far, in the evaluation's seeded order (blue), and its confidence sequence's upper end (amber); the evaluation stops once the upper end is below the margin (red rule), never before an aggregate-only split's min_aggregate_cases.</p>
${s.stops.length ? s.stops.map(stopBlock).join('\n') : '<p class="note">No early-stop record (eval_early_stop off, or no evaluation yet).</p>'}`,
  });
}
