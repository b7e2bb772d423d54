/** `vero budget`: the splits, what may be seen of each, and what is left. */
import { Command } from 'commander';
import { call, sidecarUrl } from './sidecar-client';
import { printAnswer } from './print';

export function registerBudgetCommand(program: Command): void {
  program
    .command('budget')
    .description('splits, what you may see of each, and the remaining eval budget')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .option('--json', 'machine-readable output')
    .action(async (o: { url?: string; json?: boolean }) => {
      const r = (await call(sidecarUrl(o.url), 'GET', '/status')) as {
        splits: { split: string; access: string; agent_evaluable: boolean; budget: Record<string, number | null> | null }[];
        gateway?: {
          scopes: Record<string, { models: string[]; limits: Record<string, number | undefined>; usage: Record<string, number> }>;
        };
      };
      const limit = (v: number | undefined) => (v === undefined ? '∞' : String(v));
      printAnswer(r, o.json, () =>
        [
          ...r.splits.map(
            (s) =>
              `${s.split.padEnd(12)} ${s.access.padEnd(13)} ${s.agent_evaluable ? `runs left ${s.budget?.remaining_run_budget ?? '∞'}, samples left ${s.budget?.remaining_sample_budget ?? '∞'}` : 'not evaluable'}`,
          ),
          ...Object.entries(r.gateway?.scopes ?? {}).map(
            ([scope, g]) =>
              `model calls, ${scope.padEnd(12)} requests ${g.usage.requests}/${limit(g.limits.max_requests)}, input tokens ${g.usage.input_tokens}/${limit(g.limits.max_input_tokens)}, output tokens ${g.usage.output_tokens}/${limit(g.limits.max_output_tokens)}${g.usage.cost_usd ? `, $${g.usage.cost_usd.toFixed(4)}` : ''}`,
          ),
        ].join('\n'),
      );
    });
}
