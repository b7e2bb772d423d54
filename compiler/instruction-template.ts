/**
 * instruction.md through a Jinja-compatible engine (nunjucks), as vero renders its own: a build's
 * `instruction.template` is looked up in its own directory first, then among the built-ins, so it can
 * `{% extends "instruction.md.j2" %}` and override a block (`framing`, `workflow`) instead of restating the
 * protocol. Undefined variables are errors, blocks trim their newlines, nothing is HTML-escaped (vero's settings).
 */
import * as path from 'node:path';
import nunjucks from 'nunjucks';
import { ConfigError } from '../model/errors';
import { CONTAINER } from '../model/compiled-task/serve-config';
import type { BuildConfig } from './build-config';
import { renderInstruction } from './instruction';

const BUILTIN_TEMPLATE = 'instruction.md.j2';

/** The built-in instruction split into vero's blocks: the framing (title, objective) and everything after it. */
const BUILTIN_SOURCE = '{% block framing %}{{ builtin.framing }}{% endblock %}{% block workflow %}{{ builtin.workflow }}{% endblock %}';

/** What the budget options add: vero's `instruct_multifidelity` and `instruct_exhaust_budget`, in our commands. */
function budgetGuidance(c: BuildConfig): string {
  const selection = c.splits.find((s) => s.split === c.selection_split);
  const floor = selection?.access === 'non_viewable' ? selection.min_aggregate_cases : 1;
  const parts: string[] = [];
  if (c.instruction.multifidelity)
    parts.push(
      '## Allocate the evaluation budget',
      '',
      'You decide how to allocate the finite sample budget. `vero eval --num-samples N` evaluates a subset; omit it to',
      'evaluate the whole split. A request may use the entire remaining budget: nothing is reserved for later runs, so',
      'keep some only if your strategy needs a final confirmation.',
      floor > 1
        ? `Aggregate-only requests must cover at least ${floor} cases, so no single hidden result can be read off.`
        : 'You may evaluate any subset, even a single case.',
      '',
    );
  if (c.instruction.exhaust_budget)
    parts.push(
      'Unspent evaluation budget is wasted: use what is left to re-measure the strongest candidate or to try another plausible change.',
      '',
    );
  return parts.join('\n');
}

/** Our instruction with the budget options, split at its first section into vero's `framing` and the rest. */
function builtinBlocks(c: BuildConfig): { framing: string; workflow: string } {
  const text = renderInstruction(c);
  const at = text.indexOf('\n## ');
  const framing = at < 0 ? text : text.slice(0, at + 1);
  let workflow = at < 0 ? '' : text.slice(at + 1);
  const guidance = budgetGuidance(c);
  if (guidance) {
    const graded = workflow.indexOf('## How you are graded');
    workflow = graded < 0 ? `${workflow}\n${guidance}` : `${workflow.slice(0, graded)}${guidance}\n${workflow.slice(graded)}`;
  }
  return { framing, workflow };
}

/** The variables a template sees: vero's names (layout.target_repo, disclose_budget, …) and the config itself. */
function templateContext(c: BuildConfig, builtin: { framing: string; workflow: string }): Record<string, unknown> {
  const selection = c.splits.find((s) => s.split === c.selection_split);
  const { file: _file, baseDir: _baseDir, notes: _notes, ...config } = c;
  return {
    builtin,
    config,
    layout: { target_repo: CONTAINER.workAgent },
    description: c.description.trim(),
    disclose_budget: c.instruction.disclose_budget,
    submit_enabled: c.submit_enabled,
    selection_partition: c.selection_split,
    selection_backend: c.selection_split,
    evaluation_set_name: c.instruction.evaluation_set_name,
    multifidelity: c.instruction.multifidelity,
    exhaust_budget: c.instruction.exhaust_budget,
    minimum_subset_cases: selection?.access === 'non_viewable' ? selection.min_aggregate_cases : 1,
    exposed_partitions: c.splits.filter((s) => s.expose_case_resources).map((s) => s.split),
    seed_supported: false,
    task_services_use_upstream: false,
  };
}

/** instruction.md: the built-in, or the build's template rendered over it. Template errors are config errors. */
export function instructionText(c: BuildConfig): string {
  const builtin = builtinBlocks(c);
  const template = c.instruction.template;
  const builtinLoader = {
    getSource: (name: string) => (name === BUILTIN_TEMPLATE ? { src: BUILTIN_SOURCE, path: BUILTIN_TEMPLATE, noCache: true } : null),
  };
  const loaders = [...(template ? [new nunjucks.FileSystemLoader(path.dirname(template), { noCache: true })] : []), builtinLoader];
  const env = new nunjucks.Environment(loaders as unknown as nunjucks.ILoader[], {
    autoescape: false,
    throwOnUndefined: true,
    trimBlocks: true,
    lstripBlocks: true,
  });
  let text: string;
  try {
    text = env.render(template ? path.basename(template) : BUILTIN_TEMPLATE, templateContext(c, builtin));
  } catch (e) {
    throw new ConfigError(
      `${c.file}: instruction template ${template ?? BUILTIN_TEMPLATE}: ${(e as Error).message.replace(/\s+/g, ' ').trim()}`,
    );
  }
  return `${text.replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}
