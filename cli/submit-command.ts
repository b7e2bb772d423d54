/** `vero submit`: nominate a candidate. */
import { Command } from 'commander';
import { call, sidecarUrl } from './sidecar-client';

export function registerSubmitCommand(program: Command): void {
  program
    .command('submit')
    .description('nominate the candidate to be graded (when the task enables it)')
    .option('--commit <ref>', 'commit to submit (default HEAD)')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .action(async (o: { commit?: string; url?: string }) => {
      const r = (await call(sidecarUrl(o.url), 'POST', '/submit', { commit: o.commit })) as { submitted_commit: string };
      process.stdout.write(`submitted ${r.submitted_commit}\n`);
    });
}
