/**
 * A race drawn (`vero race --json`'s result as a page): per candidate, its confidence sequence of mean(candidate −
 * leader) over the shared tasks of the race's order — the band between its lower and upper ends at each decision
 * point, its running mean difference as a line, 0 (where an elimination is decided) and the race's margin as rules
 * — and, for an eliminated candidate, a marker where it was eliminated and why. Static SVG: no script.
 */
import type { RaceListing } from '../client/race-client';
import type { RaceCandidateState, RaceState } from '../model/race/types';
import { esc, page } from './views';

export const W = 640;
export const H = 180;
export const PAD = { left: 48, right: 12, top: 12, bottom: 28 };

/** Screen coordinates of (tasks decided, difference) on a chart of `tasks` tasks, differences in [lo, hi]. */
export function scales(tasks: number, lo: number, hi: number) {
  const x = (t: number) => PAD.left + (t / Math.max(1, tasks)) * (W - PAD.left - PAD.right);
  const y = (d: number) => PAD.top + ((hi - d) / (hi - lo)) * (H - PAD.top - PAD.bottom);
  return { x, y };
}

export const fmt = (v: number): string => v.toFixed(1);

/** The axes, the 0 rule and the margin rule; the x axis counts `unit` (tasks, cases). */
export function frame(tasks: number, lo: number, hi: number, margin: number, unit = 'tasks'): string {
  const { x, y } = scales(tasks, lo, hi);
  const rule = (d: number, cls: string, label: string) =>
    `<line class="${cls}" x1="${fmt(x(0))}" x2="${fmt(x(tasks))}" y1="${fmt(y(d))}" y2="${fmt(y(d))}"/><text x="4" y="${fmt(y(d) + 4)}">${esc(label)}</text>`;
  return [
    `<line class="axis" x1="${fmt(x(0))}" x2="${fmt(x(0))}" y1="${PAD.top}" y2="${H - PAD.bottom}"/>`,
    `<line class="axis" x1="${fmt(x(0))}" x2="${fmt(x(tasks))}" y1="${H - PAD.bottom}" y2="${H - PAD.bottom}"/>`,
    rule(0, 'zero', '0'),
    margin > 0 ? rule(margin, 'margin', `+${margin}`) : '',
    `<text x="${fmt(x(tasks) - 60)}" y="${H - 8}">${tasks} ${esc(unit)}</text>`,
    `<text x="4" y="${PAD.top + 8}">${hi.toFixed(2)}</text><text x="4" y="${H - PAD.bottom}">${lo.toFixed(2)}</text>`,
  ].join('');
}

/** One candidate's sequence against the leader: its band, its mean line, and where it was eliminated. */
function sequenceChart(c: RaceCandidateState, tasks: number, margin: number): string {
  const pts = c.path;
  const lo = Math.min(-0.2, ...pts.map((p) => p.lower));
  const hi = Math.max(0.2, margin + 0.05, ...pts.map((p) => p.upper));
  const { x, y } = scales(tasks, lo, hi);
  const upper = pts.map((p) => `${fmt(x(p.t))},${fmt(y(p.upper))}`);
  const lower = [...pts].reverse().map((p) => `${fmt(x(p.t))},${fmt(y(p.lower))}`);
  const mean = pts.map((p) => `${fmt(x(p.t))},${fmt(y(p.meanDiff))}`).join(' ');
  const out = c.eliminatedAt !== null ? (pts.find((p) => p.t === c.eliminatedAt) ?? pts[pts.length - 1]!) : null;
  const marker = out
    ? `<g class="eliminated" data-t="${c.eliminatedAt}"><line x1="${fmt(x(out.t))}" x2="${fmt(x(out.t))}" y1="${PAD.top}" y2="${H - PAD.bottom}"/><text x="${fmt(x(out.t) + 4)}" y="${PAD.top + 12}">eliminated after ${c.eliminatedAt} task(s)</text></g>`
    : '';
  return `<svg class="sequence" data-candidate="${esc(c.candidate)}" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(`${c.candidate}: mean difference to the leader with its confidence sequence`)}">
${frame(tasks, lo, hi, margin)}<polygon class="band" points="${[...upper, ...lower].join(' ')}"/><polyline class="mean" points="${mean}"/>${marker}</svg>`;
}

function candidateBlock(c: RaceCandidateState, r: RaceState): string {
  const status =
    c.status === 'eliminated'
      ? `eliminated after ${c.eliminatedAt} task(s)${c.why ? `: ${c.why}` : ''}`
      : `${c.status}, ${c.tasksRun} task(s) run, mean ${c.mean.toFixed(3)}`;
  return `<section class="candidate" id="candidate-${esc(c.candidate)}"><h2>${esc(c.candidateRef)} <small>${esc(c.candidate.slice(0, 12))}</small></h2>
<p class="status">${esc(status)}</p>
${c.path.length === 0 ? '<p class="note">No decision point against a leader: it led throughout (the others are drawn against it).</p>' : sequenceChart(c, r.order.length, r.margin)}</section>`;
}

/** The race's page: its verdict and spend, then each candidate's sequence against the leader. */
export function racePage(r: RaceState, nav = ''): string {
  const saved = r.fullEvaluation.taskRuns ? 1 - r.spent.taskRuns / r.fullEvaluation.taskRuns : 0;
  return page({
    title: `Race ${r.raceId}`,
    nav,
    style: `svg.sequence{display:block;margin:4px 0 16px}svg .band{fill:#cfe3ff;stroke:none}svg .mean{fill:none;stroke:#1f5fbf;stroke-width:2}
svg .axis{stroke:#555}svg .zero{stroke:#b00;stroke-dasharray:4 3}svg .margin{stroke:#888;stroke-dasharray:2 3}
svg .eliminated line{stroke:#b00;stroke-width:2}svg text{font:11px sans-serif;fill:#333}`,
    body: `<p id="verdict">${esc(r.verdict ?? `${r.phase}: ${r.decidedUpTo} of ${r.order.length} task(s) decided`)}</p>
<p id="spend">${r.spent.taskRuns} task run(s) of ${r.fullEvaluation.taskRuns} for scoring every candidate on every task (${(100 * saved).toFixed(1)}% saved); ${(100 * r.confidence).toFixed(0)}% confidence, margin ${r.margin}.</p>
<p class="note">Each chart: the candidate's mean difference to the leader over the shared tasks (line) inside its confidence sequence (band); a candidate is eliminated once the band is entirely below 0.</p>
${r.candidates.map((c) => candidateBlock(c, r)).join('\n')}`,
  });
}

/** A race's page in `vero view`. */
export const raceHref = (raceId: string): string => `/race/${encodeURIComponent(raceId)}`;

/** The index's list of races (each a link to its page); nothing when there is none; a string: why listing failed. */
export function racesSection(races: RaceListing[] | string): string {
  if (typeof races === 'string')
    return `<h2>Races</h2>\n<p class="note" id="races-failed">The races could not be listed: ${esc(races)}</p>`;
  if (!races.length) return '';
  const rows = races
    .map(
      (r) =>
        `<tr><td><a class="race" href="${esc(raceHref(r.raceId))}">${esc(r.raceId)}</a></td><td>${esc(r.status.toLowerCase())}</td><td>${esc(r.startedAt.replace('T', ' ').slice(0, 19))}</td></tr>`,
    )
    .join('\n');
  return `<h2>Races</h2>
<table id="races"><thead><tr><th>race</th><th>status</th><th>started (UTC)</th></tr></thead><tbody>
${rows}
</tbody></table>`;
}
