/**
 * What one case of a viewable split tells the optimizer beyond its score (serve.json `feedback`: vero's
 * feedback_transcripts, feedback_max_bytes, expose_attempt_detail), read on the trusted side from the task's
 * Harbor job dir: for a case that failed, the tail of the evaluated agent's transcript, redacted; each trial's
 * reward and exception. The engine asks for it only for agent evaluations of a viewable split.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listTrialDirs, readTrialDirs } from '../harbor/collate';
import { isInside, readRegularTail } from '../infra/bounded-read';
import { parseHarborTime, trialTaskKey } from '../model/harbor/result';
import { redactedTail, tailMargin } from '../model/compiled-task/redact-secrets';
import type { TrialDetail } from '../model/compiled-task/sample-score';
import type { FeedbackSpec, ServeConfig } from '../model/compiled-task/serve-config';
import { sidecarKeyEnvs } from '../model/compiled-task/sidecar-keys';
import { extractReward, hasValidReward, rewardsOf, type LoadedTrial } from '../model/harbor/trial-ranking';

/** The transcript files vero reads, in its order: terminus-2's pane, then the agent's trajectory (ATIF). */
const TRANSCRIPT_FILES = ['agent/terminus_2.pane', 'agent/trajectory.json'];

/** The task's trials in vero's order: finished ones first, by finish time, then by trial name. */
function trialsOf(jobDir: string, task: string): LoadedTrial[] {
  if (!fs.existsSync(jobDir)) return [];
  const { trials } = readTrialDirs(listTrialDirs(jobDir), jobDir);
  const finished = (t: LoadedTrial) => parseHarborTime(t.result.finished_at) ?? Infinity;
  return trials
    .filter((t) => trialTaskKey(t.result) === task)
    .sort((a, b) => finished(a) - finished(b) || (a.result.trial_name < b.result.trial_name ? -1 : 1));
}

/** The tail of the first transcript of the trials (no symlink, nothing outside its trial dir), redacted. */
function transcriptTail(trials: LoadedTrial[], maxBytes: number, secrets: string[]): string | undefined {
  for (const t of trials) {
    const trialDir = path.dirname(t.file);
    for (const rel of TRANSCRIPT_FILES) {
      const file = path.join(trialDir, rel);
      let dir: string;
      try {
        dir = fs.realpathSync(path.dirname(file));
      } catch {
        continue;
      }
      if (!isInside(dir, fs.realpathSync(trialDir))) continue;
      const tail = readRegularTail(path.join(dir, path.basename(file)), maxBytes + tailMargin(secrets));
      if (tail && tail.bytes.length) return redactedTail(tail.bytes, tail.whole, maxBytes, secrets);
    }
  }
  return undefined;
}

/**
 * The feedback of one case: `failed` (no score, or the failure value) gets the transcript tail; every case its
 * trials' detail, when asked for. `secrets`: what must never reach the optimizer (`transcriptSecrets`).
 */
export function caseFeedback(
  jobDir: string,
  task: string,
  o: { spec: FeedbackSpec; failed: boolean; secrets: string[]; rewardKey: string | null },
): { feedback?: string; attempts?: TrialDetail[] } {
  if (!(o.spec.transcripts && o.failed && o.spec.max_bytes > 0) && !o.spec.attempt_detail) return {};
  const trials = trialsOf(jobDir, task);
  const feedback = o.spec.transcripts && o.failed && o.spec.max_bytes > 0 ? transcriptTail(trials, o.spec.max_bytes, o.secrets) : undefined;
  const attempts = o.spec.attempt_detail
    ? trials.map((t) => ({
        trial: t.result.trial_name,
        reward: hasValidReward(t.result) ? extractReward(rewardsOf(t.result)!, o.rewardKey) : null,
        exception: t.result.exception_info?.exception_type ?? null,
      }))
    : undefined;
  return { ...(feedback ? { feedback } : {}), ...(attempts ? { attempts } : {}) };
}

/**
 * The secrets of the sidecar a transcript must not carry: the declared secrets' and `harbor.env`'s values (what the
 * nested run was given), the sidecar's own keys (the gateway's upstream keys, W&B's) and the admin token (gateway
 * tokens are matched by shape).
 */
export function transcriptSecrets(cfg: ServeConfig, env: NodeJS.ProcessEnv): string[] {
  const keyEnvs = sidecarKeyEnvs(cfg);
  let adminToken: string | undefined;
  try {
    adminToken = fs.readFileSync(cfg.paths.token_path, 'utf8').trim();
  } catch {
    adminToken = undefined;
  }
  return [
    ...cfg.secrets.map((n) => env[n]),
    ...Object.values(cfg.mode_b?.harbor.env ?? {}),
    ...keyEnvs.map((n) => (n ? env[n] : undefined)),
    adminToken,
  ].filter((v): v is string => typeof v === 'string' && v.length >= 4);
}
