/**
 * A trial's page in `vero view`: the reward, exception, tokens and cost, the verifier's output beside them, and
 * the agent's ATIF trajectory as a transcript (messages, reasoning, tool calls with their results, observations,
 * per-step tokens and cost), paged. Every value comes from the trial's files, untrusted: all of it is escaped,
 * and one long field is cut (the raw file link has the rest). A trajectory that does not parse is shown raw.
 */
import type { TrialDetail, VerifierOutput } from '../client/trial-detail';
import type { TrajectoryPage } from '../client/trajectory-page';
import type { ContentPart, Step } from '../model/harbor/atif-trajectory';
import { fmtScore } from './format';
import { esc, fileHref, fmtUsd, page, trialHref } from './views';

/** The most of one text field (a message, an argument list, a tool's output) a step shows. */
export const MAX_FIELD_CHARS = 20_000;

export const TRANSCRIPT_STYLE = `.step{border:1px solid #d0d7de;border-radius:6px;margin:8px 0;padding:6px 10px}
.step>header{font-size:12px;color:#57606a;display:flex;gap:12px;flex-wrap:wrap}.step>header b{color:#1b1f23}
.src-agent{border-left:4px solid #0969da}.src-user{border-left:4px solid #8250df}.src-system{border-left:4px solid #8c959f}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:12px/1.4 ui-monospace,monospace;background:#f6f8fa;padding:4px 6px}
.call{margin:6px 0 0 12px}.call>.name{font-weight:600;font-family:ui-monospace,monospace}.result{margin-left:12px}
.cut{color:#9a6700;font-size:12px}.side{display:grid;grid-template-columns:1fr 1fr;gap:16px}.diverged{outline:3px solid #cf222e}
.pager a{margin-right:12px}details>summary{cursor:pointer;color:#57606a;font-size:12px}`;

/** A text field, escaped, cut at MAX_FIELD_CHARS with the cut said. */
export function textBlock(text: string, cls = ''): string {
  const cut = text.length > MAX_FIELD_CHARS;
  const shown = cut ? text.slice(0, MAX_FIELD_CHARS) : text;
  return `<pre${cls ? ` class="${cls}"` : ''}>${esc(shown)}</pre>${cut ? `<p class="cut">… ${text.length - MAX_FIELD_CHARS} more characters (the raw file has them)</p>` : ''}`;
}

function contentText(c: string | ContentPart[] | null | undefined): string {
  if (c == null) return '';
  if (typeof c === 'string') return c;
  return c.map((p) => (p.type === 'text' ? (p.text ?? '') : `[${p.type}: ${p.source?.path ?? ''}]`)).join('\n');
}

function metricsLine(s: Step): string {
  const m = s.metrics;
  if (!m) return '';
  const parts = [
    m.prompt_tokens != null ? `${m.prompt_tokens} in` : '',
    m.cached_tokens != null ? `${m.cached_tokens} cached` : '',
    m.completion_tokens != null ? `${m.completion_tokens} out` : '',
    m.cost_usd != null ? fmtUsd(m.cost_usd) : '',
  ].filter(Boolean);
  return parts.length ? `<span class="tokens">${esc(parts.join(' · '))}</span>` : '';
}

function toolCalls(s: Step): string {
  const results = s.observation?.results ?? [];
  const calls = (s.tool_calls ?? []).map((c) => {
    const own = results.filter((r) => r.source_call_id === c.tool_call_id);
    return `<div class="call"><span class="name">${esc(c.function_name)}</span> <span class="note">${esc(c.tool_call_id)}</span>${textBlock(
      JSON.stringify(c.arguments, null, 2),
    )}${own.map((r) => `<div class="result"><span class="note">result</span>${textBlock(contentText(r.content))}</div>`).join('')}</div>`;
  });
  const loose = results
    .filter((r) => r.source_call_id == null || !(s.tool_calls ?? []).some((c) => c.tool_call_id === r.source_call_id))
    .map((r) => `<div class="result"><span class="note">observation</span>${textBlock(contentText(r.content))}</div>`);
  return calls.join('') + loose.join('');
}

/** One step of a transcript. */
export function stepBlock(s: Step, extraClass = ''): string {
  const head = [
    `<b>#${s.step_id}</b>`,
    `<b>${esc(s.source)}</b>`,
    s.model_name ? `<span class="model">${esc(s.model_name)}</span>` : '',
    s.timestamp ? `<span class="time">${esc(s.timestamp)}</span>` : '',
    metricsLine(s),
    s.is_copied_context ? '<span class="note">copied context</span>' : '',
  ].filter(Boolean);
  const message = contentText(s.message);
  return `<section class="step src-${esc(s.source)}${extraClass ? ` ${extraClass}` : ''}" id="step-${s.step_id}"><header>${head.join('')}</header>
${s.reasoning_content ? `<details><summary>reasoning</summary>${textBlock(s.reasoning_content)}</details>` : ''}${message ? textBlock(message) : ''}${toolCalls(s)}${
    s.extra ? `<details><summary>extra</summary>${textBlock(JSON.stringify(s.extra, null, 2))}</details>` : ''
  }</section>`;
}

function pager(rel: string, t: Extract<TrajectoryPage, { ok: true }>, pageNo: number): string {
  const last = t.offset + t.steps.length;
  const of = t.totalSteps !== null ? `of ${t.totalSteps}` : 'of more (the next page reads on)';
  const prev = pageNo > 1 ? `<a id="prev" href="${esc(trialHref(rel, pageNo - 1))}">← previous</a>` : '';
  const next = t.totalSteps === null || last < t.totalSteps ? `<a id="next" href="${esc(trialHref(rel, pageNo + 1))}">next →</a>` : '';
  return `<p class="pager">steps ${t.offset + 1}–${last} ${esc(of)} ${prev}${next}</p>`;
}

/** The transcript part of a trial page: the steps of this page, or the raw file with why it did not parse. */
export function transcript(d: TrialDetail, pageNo: number): string {
  const t = d.trajectory;
  if (!t.ok && t.status !== 200) return `<p class="note" id="no-trajectory">No trajectory: ${esc(t.reason)}.</p>`;
  if (!t.ok)
    return `<p class="warn" id="raw-reason">The trajectory is shown raw: ${esc(t.reason)}.</p>${textBlock(t.raw, 'raw')}${
      t.rawTruncated ? `<p class="cut">the first ${t.raw.length} characters of ${t.size} bytes</p>` : ''
    }`;
  const h = t.head;
  const fm = h.finalMetrics;
  const n = (v: number | null | undefined) => (v == null ? '–' : String(v));
  const totals = fm
    ? ` · totals: ${n(fm.total_prompt_tokens)} in (${n(fm.total_cached_tokens)} cached) · ${n(fm.total_completion_tokens)} out · ${fmtUsd(fm.total_cost_usd)}`
    : '';
  return `<p class="note" id="trajectory-head">${esc(`${h.agent.name} ${h.agent.version}${h.agent.model_name ? ` · ${h.agent.model_name}` : ''} · ${h.schemaVersion}`)}${esc(totals)}</p>
${h.notes ? textBlock(h.notes) : ''}${pager(d.rel, t, pageNo)}
<div id="transcript">${t.steps.map((s) => stepBlock(s)).join('\n')}</div>
${pager(d.rel, t, pageNo)}`;
}

function verifierBlock(v: VerifierOutput): string {
  return `<details open><summary>${esc(v.name)} <a href="${esc(fileHref(v.rel))}">raw</a></summary>${textBlock(v.text)}${
    v.truncated ? `<p class="cut">the first ${v.text.length} characters of ${v.size} bytes</p>` : ''
  }</details>`;
}

/** The trial's result beside its transcript: reward, exception, tokens and cost, verifier output. */
export function trialSummary(d: TrialDetail): string {
  const rewards = d.rewards ? Object.entries(d.rewards).map(([k, v]) => `${k} = ${fmtScore(v)}`) : ['none'];
  const tok = d.tokens && Object.values(d.tokens).some((v) => v !== null) ? d.tokens : null;
  return `<table class="summary" id="trial-summary"><tbody>
<tr><th>task</th><td>${esc(d.task ?? '–')}</td></tr>
<tr><th>agent</th><td>${esc([d.agent, d.model].filter(Boolean).join(' · ') || '–')}</td></tr>
<tr><th>reward</th><td id="reward">${esc(rewards.join(', '))}</td></tr>
<tr><th>tokens / cost</th><td>${tok ? esc(`${tok.input ?? '–'} in (${tok.cached ?? '–'} cached) · ${tok.output ?? '–'} out · ${fmtUsd(tok.costUsd)}`) : '–'}</td></tr>
${d.exception ? `<tr><th>exception</th><td class="warn" id="exception">${esc(`${d.exception.type}: ${d.exception.message}`)}${d.exception.traceback ? `<details><summary>traceback</summary>${textBlock(d.exception.traceback)}</details>` : ''}</td></tr>` : ''}
${d.resultProblem ? `<tr><th>result</th><td class="warn">${esc(d.resultProblem)}</td></tr>` : ''}
</tbody></table>
<h2>Verifier</h2>
<div id="verifier">${d.verifier.length ? d.verifier.map(verifierBlock).join('') : '<p class="note">No verifier output.</p>'}</div>`;
}

export function trialPage(d: TrialDetail, pageNo: number, nav: string): string {
  return page({
    title: `trial ${d.trialName}`,
    nav: `${nav}${d.trajectory.ok || d.trajectory.status === 200 ? `<a href="${esc(fileHref(d.trajectoryRel))}">trajectory.json (raw)</a>` : ''}`,
    style: TRANSCRIPT_STYLE,
    body: `${trialSummary(d)}
<h2>Transcript</h2>
${transcript(d, pageNo)}`,
  });
}
