/** `vero finalize`: the verifier's step: choose, score, write the reward file. */
import { type FinalizeRanking, finalizeRankingLines } from './ranking-lines';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { ConfigError } from '../model/errors';
import { callRetrying, sidecarUrl } from './sidecar-client';
import { writeFileDurable } from '../infra/atomic-file';

export function registerFinalizeCommand(program: Command): void {
  program
    .command('finalize')
    .description(
      '(verifier) choose the candidate, score it on the target splits and write the reward file; when the sidecar cannot score (infrastructure), exit 1 and write no reward file',
    )
    .requiredOption('--token-file <file>', 'the admin token')
    .requiredOption('--output <file>', 'where to write {reward_key: score}')
    .option('--details <file>', 'also write the whole result: chosen commit, reason, shortlist, every recorded evaluation')
    .option('--url <url>', 'sidecar URL (default $VERO_EVAL_URL)')
    .action(async (o: { tokenFile: string; output: string; details?: string; url?: string }) => {
      let token: string;
      try {
        token = fs.readFileSync(o.tokenFile, 'utf8').trim();
      } catch (e) {
        throw new ConfigError(`--token-file: cannot read ${o.tokenFile} (${(e as NodeJS.ErrnoException).code})`);
      }
      // Finalize is idempotent on the sidecar: re-sent while it cannot be reached, never on a refusal.
      const r = (await callRetrying(sidecarUrl(o.url), 'POST', '/finalize', {}, { authorization: `Bearer ${token}` }, [0])) as {
        rewards: Record<string, number>;
        commit: string | null;
        reason: string;
        baselines?: Record<string, { reward: number | null; source: string; error?: string }>;
      } & FinalizeRanking;
      const write = (file: string, v: unknown) => {
        writeFileDurable(path.resolve(file), JSON.stringify(v, null, file === o.output ? undefined : 2));
      };
      if (o.details) write(o.details, r);
      write(o.output, r.rewards);
      process.stderr.write(`finalize: ${r.commit ?? 'no candidate'}: ${r.reason}\n`);
      for (const line of finalizeRankingLines(r)) process.stderr.write(`finalize: ${line}\n`);
      const baselines = Object.entries(r.baselines ?? {});
      if (baselines.length)
        process.stderr.write(
          `finalize: baseline ${baselines.map(([k, b]) => `${k}=${b.reward ?? `unscored: ${b.error}`} (${b.source})`).join(', ')}\n`,
        );
    });
}
