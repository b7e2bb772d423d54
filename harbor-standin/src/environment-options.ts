/**
 * Harbor 0.26's typed, strict environment options (`--ek`): the docker provider's options model forbids any other
 * key, and `harbor run` (and its `--dry-run`) refuses the job before it starts, printing the validation error and
 * exiting 1 (harbor/cli/jobs.py `_run_preflight`; environments/base.py `_parse_options_model`). 0.25 passes any key
 * through. Only the docker provider's options are imitated; another provider's kwargs pass as they are.
 */
import { WRITES_REWARD_VALIDITY } from './version';

/** The docker provider's option names in 0.26: the shared ones and its own (environments/options.py, docker.py). */
const DOCKER_OPTIONS = new Set(['auto_mounting', 'suppress_override_warnings', 'keep_containers']);

/** Printed as it is (not as a traceback), exit 1, no job dir: Harbor 0.26's refusal of the job's options. */
export class OptionsRefusal extends Error {}

export function checkEnvironmentOptions(env: { type: string; import_path: string | null; kwargs: Record<string, unknown> }): void {
  if (!WRITES_REWARD_VALIDITY || env.import_path !== null || env.type !== 'docker') return;
  // Unknown keys only: the stand-in does not imitate pydantic's value checks.
  const problems = Object.keys(env.kwargs)
    .filter((k) => !DOCKER_OPTIONS.has(k))
    .map((k) => `Unknown option '${k}'.`);
  if (!problems.length) return;
  throw new OptionsRefusal(
    `Invalid kwargs for environment '${env.type}':\n${problems.map((p) => `  ${p}`).join('\n')}\n` +
      `See harbor environment schema ${env.type} for available options.`,
  );
}
