/**
 * Two candidates on one task, side by side (`vero view`'s /pair page): each side's score, reward, exception and
 * verifier output, then both trajectories step by step (step i of A beside step i of B), each pair marked the
 * same or different by what the step did, and the first difference marked as where they diverged.
 */
import type { PairSide, TrajectoryPair } from '../client/trajectory-pair';
import { labelOf } from '../client/view-data';
import type { AlignedPair } from '../model/evaluation/trajectory-alignment';
import { fmtScore } from './format';
import { stepBlock, transcript, trialSummary, TRANSCRIPT_STYLE } from './view-trajectory';
import { esc, page, pairHref, trialHref } from './views';

function sideHead(label: string, s: PairSide): string {
  const row = s.row;
  const score = row ? (row.status === 'scored' ? fmtScore(row.score) : row.status) : 'not evaluated';
  return `<div class="side-head"><h2>${esc(label)}: ${esc(score)}</h2>
${s.trial ? `<p><a href="${esc(trialHref(s.trial.rel))}">${esc(s.trial.trialName)}</a></p>${trialSummary(s.trial)}` : `<p class="warn">No trial: ${esc(s.missing ?? '')}.</p>`}</div>`;
}

function pairRow(p: AlignedPair, divergedAt: number | null): string {
  const cell = (s: AlignedPair['a']) => (s ? stepBlock(s) : '<p class="note">(no step)</p>');
  const diverged = p.stepId === divergedAt;
  return `<tr id="pair-${p.stepId}" class="${p.same ? 'same' : 'differs'}${diverged ? ' diverged' : ''}">${
    diverged
      ? `<td colspan="2" class="warn" id="diverged">They diverge here, at step ${p.stepId}.</td></tr><tr class="differs diverged-row">`
      : ''
  }<td>${cell(p.a)}</td><td>${cell(p.b)}</td></tr>`;
}

/** A side whose trajectory did not parse or is missing: its own transcript part (raw, or why none). */
function unreadable(label: string, s: PairSide): string {
  return s.trial && !s.trial.trajectory.ok ? `<h3>${esc(label)}</h3>${transcript(s.trial, 1)}` : '';
}

function pairPager(p: TrajectoryPair): string {
  const href = (n: number) => pairHref(p.a.result.evalId, p.b.result.evalId, p.task, n);
  const prev = p.pageNo > 1 ? `<a id="prev" href="${esc(href(p.pageNo - 1))}">← previous steps</a>` : '';
  const next = p.more ? `<a id="next" href="${esc(href(p.pageNo + 1))}">next steps →</a>` : '';
  return prev || next ? `<p class="pager">${prev}${next}</p>` : '';
}

function divergence(p: TrajectoryPair): string {
  const shown = p.alignment.pairs.length;
  if (!shown) return '<p class="note">Neither side has steps to align.</p>';
  if (p.alignment.divergedAt !== null)
    return `<p class="verdict" id="divergence">Same actions through step ${p.alignment.divergedAt - 1}; <a href="#diverged">they diverge at step ${p.alignment.divergedAt}</a>.</p>`;
  return `<p class="verdict" id="divergence">The same actions in all ${shown} step(s) shown${p.more ? ' (the next page may differ)' : ''}.</p>`;
}

export function pairPage(p: TrajectoryPair, nav: string): string {
  const [la, lb] = [labelOf(p.a.result), labelOf(p.b.result)];
  const rows = p.alignment.pairs.map((x) => pairRow(x, p.alignment.divergedAt)).join('\n');
  return page({
    title: `${p.task}: ${lb} against ${la}`,
    nav,
    style: `${TRANSCRIPT_STYLE}
#pairs{table-layout:fixed;width:100%}#pairs td{width:50%}tr.differs>td{background:#fff8f0}#diverged{font-size:14px;background:#ffebe9}`,
    body: `<div class="side">${sideHead(`A ${la}`, p.a)}${sideHead(`B ${lb}`, p.b)}</div>
<h2>Step by step</h2>
${divergence(p)}
${unreadable(`A ${la}`, p.a)}${unreadable(`B ${lb}`, p.b)}
${pairPager(p)}
<table id="pairs"><thead><tr><th>A ${esc(la)}</th><th>B ${esc(lb)}</th></tr></thead><tbody>
${rows}
</tbody></table>
${pairPager(p)}`,
  });
}
