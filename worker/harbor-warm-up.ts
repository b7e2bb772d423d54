/**
 * The worker's harbor fork server, warm before the first evaluation: started as the worker starts, for the default
 * `harbor.command` (`harbor`, as this worker's PATH finds it) and the environment a run of the default settings
 * has, so the first run that forks it (an evaluation's preflight) pays no import of Harbor (≈ 4 CPU-s). In the
 * background: it never delays or fails the worker's start; when the launcher is not a console script, forking is
 * off (VERO_HARBOR_FORK=0) or the server cannot start, the first run starts it as without this.
 */
import { warmForkServer } from '../harbor/forkserver';
import { harborEnv } from '../harbor/process-env';
import type { EvalSettings } from '../model/evaluation/input';
import { launcher } from '../model/harbor/argv';
import { HarborSection } from '../model/harbor/config';

/** Resolves true once the server is warm, false when there is none to warm (never rejects). */
export function warmDefaultHarbor(): Promise<boolean> {
  const defaults: Pick<EvalSettings, 'harbor'> = { harbor: HarborSection.parse({}) };
  // As infra/process-group.ts forks a run: this process's environment, then what vero adds (the per-run
  // variables among them are not the server's).
  const env = Object.fromEntries(
    Object.entries({ ...process.env, ...harborEnv(defaults as EvalSettings, '/', '/') }).filter(
      (e): e is [string, string] => e[1] !== undefined,
    ),
  );
  return warmForkServer(launcher(defaults.harbor, '/')[0]!, env).catch(() => false);
}
