/** The pages of `vero view`: the evaluations with the optimization's progress, one evaluation, two side by side. */
import { EvaluationDetail, EvaluationRow, labelOf, progressSeries, TaskView, TrialView, type CompareDetail } from '../client/view-data';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import {
  cellClass,
  comparisonText,
  deltaChart,
  esc,
  evaluationsTable,
  fileHref,
  fmtCi,
  fmtUsd,
  page,
  pairHref,
  progressChart,
  trialHref,
} from './views';
import { fmtScore } from './format';

export const CHART_JS_URL = '/assets/chart.umd.min.js';
export const NAV = '<a href="/">evaluations</a>';

export const evalHref = (evalId: string): string => `/eval/${encodeURIComponent(evalId)}`;
const compareHref = (a: string, b: string) => `/compare?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`;

/** The evaluations; `races`: the races' list (cli/view-race.ts racesSection), drawn under them. */
export function indexPage(rows: EvaluationRow[], scope: string, races = ''): string {
  const { points, baseline, byCommitTime } = progressSeries(rows);
  const progress = points.length
    ? `${progressChart(points, baseline)}
<p class="note">One point per candidate (its latest completed evaluation) in ${byCommitTime ? 'commit order (committer time)' : 'the order they were evaluated (the agent repo does not know every candidate: pass -c)'}; baseline: ${esc(points[0]!.label)}.</p>`
    : '<p class="note">No completed evaluation yet.</p>';
  const completed = rows.filter((r) => r.workflowStatus === 'COMPLETED');
  const options = (selected: string) =>
    completed
      .map(
        (r) =>
          `<option value="${esc(r.evalId)}"${r.evalId === selected ? ' selected' : ''}>${esc(labelOf(r))} · ${esc(r.evalId.slice(0, 24))}…</option>`,
      )
      .join('');
  const compare =
    completed.length >= 2
      ? `<form id="compare" action="/compare" method="get"><label>A <select name="a">${options(completed[1]!.evalId)}</select></label>
<label>B <select name="b">${options(completed[0]!.evalId)}</select></label> <button type="submit">compare B with A</button>
<a id="compare-latest" href="${esc(compareHref(completed[1]!.evalId, completed[0]!.evalId))}">the two latest</a></form>`
      : '';
  return page({
    title: 'vero-harbor: evaluations',
    chartJs: CHART_JS_URL,
    body: `<p class="note">${rows.length} evaluation(s) ${esc(scope)}.</p>
<h2>Progress over candidates</h2>
${progress}
<h2>Evaluations</h2>
${compare}
${evaluationsTable(rows, (r) => evalHref(r.evalId), labelOf)}
${races}`,
  });
}

const link = (f: { label: string; rel: string | null }) =>
  f.rel
    ? `<a href="${esc(fileHref(f.rel))}">${esc(f.label)}</a>`
    : `<span class="note" title="outside this viewer's home">${esc(f.label)}</span>`;

function trialRows(trials: TrialView[]): string {
  if (!trials.length) return '';
  const rows = trials
    .map(
      (t) =>
        `<tr><td>${esc(t.name)}</td><td>${esc(
          t.rewards
            ? Object.entries(t.rewards)
                .map(([k, v]) => `${k}=${v}`)
                .join(', ')
            : '–',
        )}</td><td>${esc(t.exception ?? '')}</td><td class="num">${t.durationSec === null ? '–' : `${t.durationSec.toFixed(1)} s`}</td><td class="phases">${esc(t.phases.map((p) => `${p.phase} ${p.sec.toFixed(1)} s`).join(' · '))}</td><td class="num">${fmtUsd(t.costUsd)}</td><td class="files">${t.pageRel ? `<a class="transcript" href="${esc(trialHref(t.pageRel))}">transcript</a>` : ''}${t.files.map(link).join('')}</td></tr>`,
    )
    .join('');
  return `<table class="trials"><thead><tr><th>trial</th><th>rewards</th><th>exception</th><th>duration</th><th>phases</th><th>cost</th><th>files</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function taskRow(t: TaskView): string {
  return `<tr id="task-${esc(t.task)}"><td>${esc(t.task)}</td><td class="${cellClass(t.score, t.status)}">${esc(t.status === 'scored' ? fmtScore(t.score) : t.status)}</td><td class="num">${t.nTrials}</td><td class="num">${t.runs ?? '–'}</td><td>${esc(t.chosenTrial ?? '')}</td><td>${t.harborLog ? link(t.harborLog) : ''}</td><td>${esc(t.note)}${trialRows(t.trials)}</td></tr>`;
}

function summary(r: CandidateResult): string {
  const u = r.uncertainty;
  const nRun = r.nRun ?? r.nTasks;
  return `<table class="summary"><tbody>
<tr><th>candidate</th><td>${esc(labelOf(r))} <span class="note">${esc(r.candidate)}</span></td></tr>
<tr><th>status</th><td>${esc(r.status)}${r.spend?.reached ? ` — ${esc(r.spend.reached)}` : ''}</td></tr>
<tr><th>score</th><td>${fmtScore(r.score)} over ${nRun} task(s)${nRun < r.nTasks ? ` of ${r.nTasks} (${r.nTasks - nRun} not run)` : ''}; 95% interval ${fmtCi(u?.ci95 ?? null)}, standard error ${fmtScore(u?.stdErr)}</td></tr>
<tr><th>scored / errors</th><td>${r.nScored} / ${r.nErrors} (errors count as 0)</td></tr>
${r.attempts ? `<tr><th>attempts</th><td>pass@${r.attempts.k} ${fmtScore(r.attempts.passAtK)}, pass^${r.attempts.k} ${fmtScore(r.attempts.passHatK)}</td></tr>` : ''}
<tr><th>cost</th><td>${fmtUsd(r.usage?.costUsd)}</td></tr>
<tr><th>time</th><td>${esc(r.startedAt)} → ${esc(r.finishedAt)}</td></tr>
</tbody></table>`;
}

export function evaluationPage(d: EvaluationDetail, uiLink: string | null): string {
  const head = d.result
    ? summary(d.result)
    : `<p class="warn">partial: the evaluation is ${d.paused ? 'paused (no task starts until vero resume)' : esc(d.workflowStatus.toLowerCase())}; these are the rows so far on this host.</p>`;
  return page({
    title: `evaluation ${d.evalId}`,
    nav: `${NAV}${uiLink ? `<a id="web-ui" href="${esc(uiLink)}">Temporal Web UI</a>` : ''}`,
    body: `${head}
<h2>Tasks</h2>
<table id="tasks"><thead><tr><th>task</th><th>score</th><th>trials</th><th>runs</th><th>chosen trial</th><th>log</th><th>note / trials</th></tr></thead><tbody>
${d.tasks.map(taskRow).join('\n')}
</tbody></table>`,
  });
}

export function comparePage(c: CompareDetail): string {
  const [la, lb] = [labelOf(c.a), labelOf(c.b)];
  const rows = c.comparison.deltas
    .map(
      (d) =>
        `<tr><td>${d.delta !== 0 ? `<a class="pair" href="${esc(pairHref(c.a.evalId, c.b.evalId, d.task))}">${esc(d.task)}</a>` : esc(d.task)}</td><td class="${cellClass(d.a, 'scored')}">${d.a.toFixed(3)}</td><td class="${cellClass(d.b, 'scored')}">${d.b.toFixed(3)}</td><td class="num${d.delta < 0 ? ' warn' : ''}">${d.delta >= 0 ? '+' : ''}${d.delta.toFixed(3)}</td></tr>`,
    )
    .join('\n');
  const only = [...c.comparison.onlyInA.map((t) => `${t} (only ${la})`), ...c.comparison.onlyInB.map((t) => `${t} (only ${lb})`)];
  return page({
    title: `${lb} vs ${la}`,
    nav: `${NAV}<a href="${esc(evalHref(c.a.evalId))}">${esc(la)}</a><a href="${esc(evalHref(c.b.evalId))}">${esc(lb)}</a>`,
    chartJs: CHART_JS_URL,
    body: `${comparisonText(c.comparison, la, lb)}
${deltaChart(c.comparison, la, lb)}
<h2>Per task</h2>
<table id="deltas"><thead><tr><th>task</th><th>${esc(la)}</th><th>${esc(lb)}</th><th>delta</th></tr></thead><tbody>
${rows}
</tbody></table>
<p class="note">A task whose score differs opens both trajectories step by step, with where they diverged marked.</p>
${only.length ? `<p class="note">Not in both: ${esc(only.join(', '))}.</p>` : ''}`,
  });
}

export function errorPage(status: number, message: string): string {
  return page({ title: `${status}`, nav: NAV, body: `<p class="warn">${esc(message)}</p>` });
}
