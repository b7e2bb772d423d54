/** What the agent may see of an evaluation, by tier: written to the agent-visible volume (main mounts it read-only). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SplitAccess } from '../model/serve-config';

export interface SampleScore {
  id: number;
  name: string;
  score: number | null;
  error: string | null;
  output?: unknown;
}

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
  fs.writeFileSync(path.join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  if (access === 'viewable') for (const s of samples) fs.writeFileSync(path.join(dir, `${s.id}.json`), `${JSON.stringify(s, null, 2)}\n`);
  return dir;
}
