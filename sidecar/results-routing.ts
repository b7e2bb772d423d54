/** What the agent may see of an evaluation, by tier: written to the agent-visible volume (main mounts it read-only). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SampleScore } from '../model/compiled-task/sample-score';
import type { SplitAccess } from '../model/compiled-task/serve-config';
import { writeJsonDurable } from '../infra/atomic-file';

export interface EvalSummary {
  commit: string;
  split: string;
  n_samples: number;
  n_errors: number;
  mean_score: number;
  status: string;
}

export function routeResults(agentVolume: string, access: SplitAccess, summary: EvalSummary, samples: SampleScore[]): string | null {
  if (access === 'no_access') return null;
  const dir = path.join(agentVolume, 'results', `${summary.split}__${summary.commit.slice(0, 12)}`);
  fs.rmSync(dir, { recursive: true, force: true }); // no stale per-sample files from an earlier evaluation
  fs.mkdirSync(dir, { recursive: true });
  if (access === 'viewable') for (const s of samples) writeJsonDurable(path.join(dir, `${s.id}.json`), s);
  writeJsonDurable(path.join(dir, 'summary.json'), summary); // last: a summary means its samples are there
  return dir;
}
