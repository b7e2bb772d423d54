/**
 * The `harbor:` section: how one task is run through `harbor run`. Shared by vero.yaml (evaluations) and
 * build.yaml (the nested harness of compiled tasks), so both are validated the same way.
 */
import { z } from 'zod';

const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name');

/**
 * Harbor's environment types (`harbor run -e`, its EnvironmentType): those of every supported version (0.26 adds
 * snowflake, boxd, superserve and aca-sandbox to 0.25's), so a misspelt one is refused before anything runs.
 */
const HARBOR_ENVIRONMENTS = [
  'aca-sandbox',
  'ack',
  'apple-container',
  'beam',
  'blaxel',
  'boxd',
  'cua-cloud',
  'cwsandbox',
  'daytona',
  'docker',
  'e2b',
  'ec2',
  'gke',
  'hf-sandbox',
  'hyperbrowser',
  'islo',
  'kata',
  'kernel',
  'langsmith',
  'modal',
  'mosaic',
  'novita',
  'opensandbox',
  'openshift',
  'podman',
  'prime',
  'runloop',
  'runta',
  'sail',
  'sbx',
  'singularity',
  'skypilot',
  'smol',
  'snowflake',
  'superserve',
  'tensorlake',
  'use-computer',
  'vercel',
] as const;

export const HarborSection = z
  .strictObject({
    /**
     * The launcher, as an argv list or a string split on spaces; `{worktree}` is replaced by the candidate's
     * worktree. Default `harbor`; e.g. `uv run --project {worktree} harbor`.
     */
    command: z
      .union([
        z.string().refine((c) => c.trim() !== '', 'expected a command such as "harbor", got an empty string'),
        z.array(z.string().refine((c) => c.trim() !== '', 'expected a non-empty argument')).min(1),
      ])
      .default(['harbor']),
    /** `-a`: a built-in agent name or a `module.path:Class` import path. */
    agent: z.string().min(1).default('oracle'),
    /** `-m`. */
    model: z.string().min(1).optional(),
    /** `-e`: an environment type (Harbor's EnvironmentType) or `module.path:Class`. */
    environment: z
      .string()
      .min(1)
      .refine((e) => (HARBOR_ENVIRONMENTS as readonly string[]).includes(e) || /^[\w.]+:\w+$/.test(e), {
        error: (iss) =>
          `"${String(iss.input)}" is not a Harbor environment (expected one of ${HARBOR_ENVIRONMENTS.join(', ')}, or module.path:Class)`,
      })
      .optional(),
    agent_kwargs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).default({}),
    /** `--ae K=V`. */
    agent_env: z.record(identifier, z.string()).default({}),
    /** `--ek k=v`. */
    environment_kwargs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
    /** `-k`: independent trials per task. */
    n_attempts: z.number().int().min(1).default(1),
    /** `-r`: Harbor-level retries of a trial that ended with an exception. */
    max_retries: z.number().int().min(0).default(0),
    /** `-n`: trials of one task in flight (default: all attempts at once). */
    n_concurrent_trials: z.number().int().min(1).optional(),
    retry_include: z.array(z.string().min(1)).default([]),
    /**
     * Exception types Harbor must not retry. Non-empty, it replaces Harbor's default list, so vero adds Harbor 0.26's
     * policy exclusions (every type whose error policy says "no retry": model/harbor/error-policy.ts) to it: a
     * retry list never re-runs what Harbor's policy would not.
     */
    retry_exclude: z.array(z.string().min(1)).default([]),
    /**
     * Harbor 0.26's `override_error_policy` (job config): per exception type name, what to retry, grade and count as
     * a valid reward. Passed in vero's job config file (`-c`); Harbor keeps it in lock.json, so a job resumes only
     * with the same overrides (as every other knob here, it is part of the evaluation's config digest).
     */
    override_error_policy: z
      .record(
        z.string().min(1),
        z.strictObject({
          should_retry: z.boolean().optional(),
          should_grade: z.boolean().optional(),
          has_valid_reward: z.boolean().optional(),
        }),
      )
      .optional(),
    /**
     * Harbor's backoff before a retry, min(retry_min_wait_sec × retry_wait_multiplier^attempt, retry_max_wait_sec)
     * (Harbor's defaults 1, 1, 60: a constant second, too short for a rate-limit storm). Harbor has no flags for
     * them: vero passes them in a job config file (`-c`) holding only `retry`.
     */
    retry_wait_multiplier: z.number().positive().optional(),
    retry_min_wait_sec: z.number().min(0).optional(),
    retry_max_wait_sec: z.number().positive().optional(),
    timeout_multiplier: z.number().positive().optional(),
    agent_timeout_multiplier: z.number().positive().optional(),
    verifier_timeout_multiplier: z.number().positive().optional(),
    agent_setup_timeout_multiplier: z.number().positive().optional(),
    environment_build_timeout_multiplier: z.number().positive().optional(),
    /**
     * Directories of the candidate's checkout put on harbor's PYTHONPATH, in order, so `-a module:Class` imports
     * from them (default: the checkout's root); e.g. `[src]` for a project with a src layout.
     */
    python_path: z
      .array(
        z
          .string()
          .min(1)
          .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !/[\0\n\r:]/.test(p), {
            message: "expected a relative directory inside the checkout (no leading /, no .., no ':')",
          }),
      )
      .min(1)
      .optional(),
    /** Extra environment for the harbor process (not for the agent; see agent_env). */
    env: z.record(identifier, z.string()).default({}),
    /** Passed through after the flags vero-harbor sets; may not repeat any of them. */
    extra_args: z.array(z.string()).default([]),
  })
  .superRefine((h, ctx) => {
    const clash = collidingFlags(h.extra_args);
    if (clash.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['extra_args'],
        message: `${clash.join(', ')} ${clash.length > 1 ? 'are' : 'is'} set by vero-harbor from typed fields; use the field instead`,
      });
    }
    const unscored = flagsIn(h.extra_args, UNSCORED_RUN_FLAGS);
    if (unscored.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['extra_args'],
        message: `${unscored.join(', ')} would stop trials from running or being scored; an evaluation cannot use ${unscored.length > 1 ? 'them' : 'it'}`,
      });
    }
  });
export type HarborSection = z.infer<typeof HarborSection>;

/** Every `harbor run` flag that vero-harbor emits or that would change which tasks or trials run. */
const CONTROLLED_FLAGS = [
  ['-p', '--path'],
  ['-d', '--dataset'],
  ['-t', '--task'],
  ['-i', '--include-task-name'],
  ['-x', '--exclude-task-name'],
  ['-l', '--n-tasks'],
  ['--registry-path'],
  ['--registry-url'],
  ['--repo'],
  ['-k', '--n-attempts'],
  ['-r', '--max-retries'],
  ['-n', '--n-concurrent'],
  ['--retry-include'],
  ['--retry-exclude'],
  ['-a', '--agent'],
  ['--agent-import-path'],
  ['-m', '--model'],
  ['--ak', '--agent-kwarg'],
  ['--ae', '--agent-env'],
  ['-e', '--env'],
  ['--environment-import-path'],
  ['--ek', '--environment-kwarg'],
  ['-o', '--jobs-dir'],
  ['--job-name'],
  ['-y', '--yes'],
  ['-q', '--quiet', '--silent'],
  ['-c', '--config'],
  ['--print-config'],
  ['--timeout-multiplier'],
  ['--agent-timeout-multiplier'],
  ['--verifier-timeout-multiplier'],
  ['--agent-setup-timeout-multiplier'],
  ['--environment-build-timeout-multiplier'],
].flat();

/** Harbor 0.25 flags after which no trial runs or is scored (vero's preflight adds `--dry-run` itself). */
const UNSCORED_RUN_FLAGS = ['--dry-run', '--launch', '--install-only', '--disable-verification', '--diff'];

/** The flags of `names` among `args`, matched exactly (`--flag` or `--flag=value`), in order of appearance. */
function flagsIn(args: string[], names: string[]): string[] {
  const found: string[] = [];
  for (const a of args) {
    const name = a.startsWith('--') && a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (names.includes(name) && !found.includes(name)) found.push(name);
  }
  return found;
}

/** The controlled flags among `args`, matched exactly (`--flag` or `--flag=value`), in order of appearance. */
export const collidingFlags = (args: string[]): string[] => flagsIn(args, CONTROLLED_FLAGS);

/**
 * Whether trials run in local Docker: Harbor's default environment is docker, so only a named other one (modal,
 * daytona, …) runs elsewhere. An evaluation's Docker state is then vero's to check and clean, and a compiled task's
 * sidecar needs its own engine for nested trials.
 */
export const usesLocalDocker = (environment: string | undefined): boolean => environment === undefined || environment === 'docker';
