/** instruction.md: the agent-side protocol, generated from the config so it cannot drift from it. */
import { CONTAINER } from '../model/compiled-task/serve-config';
import type { BuildConfig } from './build-config';

const ACCESS_TEXT = {
  viewable: 'you can evaluate it and read per-sample results',
  non_viewable: 'you can evaluate it and see the aggregate score only',
  no_access: 'hidden: you cannot evaluate it or see anything about it',
} as const;

/** What a viewable split's per-case result files carry beyond the score (`feedback`). */
function feedbackLines(c: BuildConfig): string[] {
  const f = c.feedback;
  if (!f || !((f.transcripts && f.max_bytes > 0) || f.attempt_detail)) return [];
  const what = [
    f.transcripts && f.max_bytes > 0
      ? `a failed case's \`feedback\` holds the end of the evaluated agent's transcript (at most ${f.max_bytes} bytes, secrets redacted)`
      : null,
    f.attempt_detail ? "every case's `attempts` lists its trials' rewards and exceptions" : null,
  ].filter(Boolean);
  return [`In a viewable split's per-case result files (the \`results:\` path \`vero eval\` prints), ${what.join('; ')}.`, ''];
}

/** Where the exposed splits' task files are (`splits[].expose_case_resources`). */
function resourceLines(c: BuildConfig): string[] {
  const exposed = c.splits.filter((s) => s.expose_case_resources).map((s) => `\`${s.split}\``);
  if (!exposed.length) return [];
  return [
    `The task files of split(s) ${exposed.join(', ')} (each task's instruction, environment, tests and solution) are in \`${CONTAINER.agentVolume}/tasks/\`, read-only: start at \`tasks/index.json\`.`,
    '',
  ];
}

/** A split's budget as the instruction shows it ("metered" only, with vero's disclose_budget: false). */
function budgetCell(c: BuildConfig, s: BuildConfig['splits'][number]): string {
  const b = c.budgets.find((x) => x.split === s.split);
  if (!b) return s.access === 'no_access' ? '-' : 'no budget: not evaluable';
  if (!c.instruction.disclose_budget) return 'metered (not disclosed)';
  return [
    b.total_run_budget !== undefined ? `${b.total_run_budget} run(s)` : null,
    b.total_sample_budget !== undefined ? `${b.total_sample_budget} sample(s)` : null,
    b.max_samples_per_run !== undefined ? `≤ ${b.max_samples_per_run} per run` : null,
  ]
    .filter(Boolean)
    .join(', ');
}

/** What ranks candidates when it is not "the score", and the constraints a candidate must satisfy. */
function objectiveLines(c: BuildConfig): string[] {
  const lines: string[] = [];
  if (c.objective.direction === 'minimize')
    lines.push(
      `Lower scores are better here (the score is minimised): the best candidate is the one with the lowest score, and your reward is the negated score. A case that fails counts as ${c.objective.failure_value}, and so does having no candidate.`,
    );
  if (c.objective.metric && c.objective.metric !== 'score') lines.push(`The score is the evaluation's \`${c.objective.metric}\` metric.`);
  const rules = (c.objective.constraints ?? []).map((k) => `\`${k.metric} ${k.operator} ${k.value}\``);
  if (rules.length)
    lines.push(
      `A candidate must satisfy ${rules.join(', ')}: one that breaks a constraint is never graded as your best, and a graded one that breaks it on the target is rewarded the failure value.`,
    );
  return lines.length ? ['', ...lines] : [];
}

export function renderInstruction(c: BuildConfig): string {
  const splitRows = c.splits.map((s) => {
    const budget = budgetCell(c, s);
    const floor = s.access === 'non_viewable' ? ` (a request must cover at least ${s.min_aggregate_cases} cases, or the whole split)` : '';
    return `| \`${s.split}\` | ${s.access} | ${ACCESS_TEXT[s.access]}${floor} | ${budget} |`;
  });
  const hidden = c.splits.filter((s) => s.access === 'no_access').map((s) => `\`${s.split}\``);
  const targets = c.targets.map((t) => `\`${t.split}\` (reward \`${t.reward_key}\`)`).join(', ');
  const lines = [
    `# Optimize the agent in /workspace/agent`,
    '',
    c.description.trim() ? `${c.description.trim()}\n` : '',
    'The agent to improve is the git repository at `/workspace/agent`. Every commit is a candidate. You never',
    'score yourself: a trusted evaluation service does, within a metered budget.',
    '',
    '## How to evaluate a candidate',
    '',
    '1. Edit the code in `/workspace/agent` and `git commit` your change (only committed code is evaluated).',
    `2. Run \`vero eval --split ${c.selection_split}\` (add \`--commit <sha>\` for another commit, \`--num-samples N\` for fewer samples).`,
    '   It waits a few minutes at most. If the evaluation has not finished by then, it prints its id and progress and',
    '   exits 0: the evaluation keeps running. Run `vero eval wait <id>` (again as often as it says still running) for',
    '   its result; waiting costs no budget. A failed or cancelled evaluation exits 1 with the reason. Run these in',
    '   the foreground, one call at a time. (`evals run --partition <split>`, `evals wait`, `evals status`',
    '   and `evals submit` work too.)',
    `3. Run \`vero budget\` to see the splits, what you may see of each${c.instruction.disclose_budget ? ', and the remaining budget' : ' (the remaining budget is not disclosed)'}.`,
    ...(c.submit_enabled ? ['4. Run `vero submit [--commit <sha>]` to nominate the candidate you want graded.'] : []),
    '',
    '| split | access | meaning | budget |',
    '|---|---|---|---|',
    ...splitRows,
    '',
    'Every evaluation spends budget when it starts, whether it succeeds or not; a request over budget is refused and costs nothing.',
    '',
    ...feedbackLines(c),
    ...resourceLines(c),
    '## How you are graded',
    '',
    c.reward_mode === 'submit'
      ? `Your reward is the score of the commit you submit with \`vero submit\`, evaluated on ${targets}. If you submit nothing, your best candidate by its \`${c.selection_split}\` score is graded instead (re-scored by the trusted service), else your last evaluated candidate; with no candidate at all, the reward is 0.`
      : `Your reward is the score of your best candidate on ${targets}. The candidates with the top ${c.auto_best_k} \`${c.selection_split}\` scores (from evaluations covering at least ${Math.round(c.min_selection_coverage * 100)}% of it) are re-scored by the trusted service and the best of those wins; with none, your last evaluated candidate is graded. Evaluations of the unmodified baseline commit do not create a candidate: commit a change first. With no candidate, the reward is 0.`,
    ...objectiveLines(c),
    ...(c.baseline_floor ? ['', 'The reward is never below the baseline score: a candidate must beat the baseline to count.'] : []),
    '',
    `An evaluation still running when your time ends is waited for (up to ${Math.round(c.drain_timeout / 60)} min) and its candidate can still be graded; after that it is cancelled. No new evaluation starts once grading has begun.`,
    '',
    ...(hidden.length
      ? [`Hidden split(s) ${hidden.join(', ')}: nothing about their samples, labels or per-sample results is available to you.`, '']
      : []),
    ...(c.read_only_paths.length
      ? [
          `Read-only paths: ${c.read_only_paths.map((p) => `\`${p}\``).join(', ')}. A commit that changes, deletes, renames or replaces anything matching them (compared with the baseline commit) is refused by the evaluation service at no budget cost, and can never be graded.`,
          '',
        ]
      : []),
  ];
  return `${lines
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
