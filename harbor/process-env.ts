/**
 * How vero runs a harbor process: from a working directory vero owns (Harbor 0.25 loads `.env.local` from
 * its cwd, so the candidate's checkout must not be it), with the candidate's checkout (or its `harbor.python_path`
 * dirs) on PYTHONPATH (so `-a module:Class` imports the candidate's agent), stopped the way Harbor expects (SIGTERM
 * to harbor alone, a grace long enough for its Docker teardown). What a launch's ending means is harbor/launch-decision.ts.
 */
import * as path from 'node:path';
import type { EvalSettings } from '../model/evaluation/input';
import { runPaths } from '../model/paths';
import { JOB_ENV } from '../model/harbor/argv';
import { ensureDir } from './orphans';

export const DEFAULT_STOP_GRACE_SEC = 60;

/** The empty directory harbor runs in. */
export function harborCwd(runDir: string): string {
  return ensureDir(runPaths(runDir).harborCwd);
}

/** Variables vero adds to harbor's environment (on top of `harbor.env`, which wins except for the marker). */
export function harborEnv(s: EvalSettings, worktree: string, jobDir: string): Record<string, string> {
  const roots = (s.harbor.python_path ?? ['.']).map((dir) => path.join(worktree, dir));
  const pythonPath = [...roots, s.harbor.env.PYTHONPATH ?? process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
  return {
    // Offline machines: LiteLLM would otherwise warn on every start that it cannot fetch its cost map.
    LITELLM_LOCAL_MODEL_COST_MAP: process.env.LITELLM_LOCAL_MODEL_COST_MAP ?? 'True',
    ...s.harbor.env,
    PYTHONPATH: pythonPath,
    [JOB_ENV]: jobDir,
  };
}
