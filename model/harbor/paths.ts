/**
 * Harbor's own layout of a job dir and a trial dir (reference/harbor.md §1.5): every file name of either is
 * spelled here only (a lint rule refuses them elsewhere). Pure POSIX joins, for absolute and home-relative paths.
 *
 * ```
 * <job>/                 config.json, lock.json, result.json (the job's, not a trial's), <trial>/…
 *   <trial>/             result.json, trial.log, exception.txt
 *     agent/             the agent's logs; trajectory.json (ATIF: model/harbor/atif-trajectory.ts)
 *     verifier/          reward.json or reward.txt, the tests' output; a compiled task's finalize.json
 *     artifacts/         what the task collects; a compiled task's vero-session/ (the sidecar's snapshot)
 * ```
 */

const join = (...parts: string[]): string => parts.join('/').replace(/\/{2,}/g, '/');

/** The files of a Harbor trial dir that people read (the viewer links them). */
export const HARBOR_TRIAL_FILES = { result: 'result.json', log: 'trial.log', exception: 'exception.txt' } as const;

/** The dirs of a Harbor trial dir. */
export const HARBOR_TRIAL_DIRS = { agent: 'agent', verifier: 'verifier', artifacts: 'artifacts' } as const;

/** A trial dir's files. */
export function trialFiles(trialDir: string) {
  const agent = join(trialDir, HARBOR_TRIAL_DIRS.agent);
  const verifier = join(trialDir, HARBOR_TRIAL_DIRS.verifier);
  const artifacts = join(trialDir, HARBOR_TRIAL_DIRS.artifacts);
  return {
    result: join(trialDir, HARBOR_TRIAL_FILES.result),
    log: join(trialDir, HARBOR_TRIAL_FILES.log),
    exception: join(trialDir, HARBOR_TRIAL_FILES.exception),
    agentDir: agent,
    /** The agent's ATIF trajectory. */
    trajectory: join(agent, 'trajectory.json'),
    verifierDir: verifier,
    /** The verifier's rewards. */
    reward: join(verifier, 'reward.json'),
    /** The verifier's reward as one number (Harbor reads either file). */
    rewardText: join(verifier, 'reward.txt'),
    /** A compiled task's verifier details (its sidecar's finalize). */
    finalize: join(verifier, 'finalize.json'),
    artifactsDir: artifacts,
    /** A compiled task's session snapshot, collected from its sidecar. */
    session: join(artifacts, 'vero-session'),
  };
}

/** Harbor's own files of a job dir, and its trials' results. */
export const harborJobFiles = {
  config: (jobDir: string) => join(jobDir, 'config.json'),
  lock: (jobDir: string) => join(jobDir, 'lock.json'),
  result: (jobDir: string) => join(jobDir, 'result.json'),
  trialResult: (jobDir: string, trial: string) => trialFiles(join(jobDir, trial)).result,
  /** A trial dir's result.json. */
  resultIn: (trialDir: string) => trialFiles(trialDir).result,
};
