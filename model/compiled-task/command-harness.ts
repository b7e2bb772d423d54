/**
 * Mode A's command harness (vero's command backend): a trusted program, baked into the sidecar, that scores the
 * candidate's workspace and writes a report of metrics. Its command's placeholders, its minimal environment and
 * the report it writes (vero's EvaluationReport, schema_version 1) are vero's.
 */
import { z } from 'zod';

/** The placeholders a harness command may use, each replaced by a path of the evaluation. */
export const HARNESS_PLACEHOLDERS = ['harness', 'workspace', 'request', 'report', 'artifacts'] as const;
export type HarnessPaths = Record<(typeof HARNESS_PLACEHOLDERS)[number], string>;

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name');

/** The harness as serve.json holds it: `dir` in the sidecar, the command, and what its environment holds. */
export const HarnessSpec = z.strictObject({
  dir: z.string(),
  command: z.array(z.string().min(1)).min(1),
  /** Relative to `dir`. */
  working_directory: z.string().default('.'),
  env: z.record(envName, z.string()).default({}),
  /** Names of the sidecar's variables handed over (when set). */
  passthrough_env: z.array(envName).default([]),
});
export type HarnessSpec = z.infer<typeof HarnessSpec>;

/** The placeholders of `command` that are not vero's (`{input:…}` staged inputs are not supported). */
export function unknownPlaceholders(command: readonly string[]): string[] {
  const known = new Set<string>(HARNESS_PLACEHOLDERS);
  const found = command.flatMap((a) => [...a.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]!));
  return [...new Set(found.filter((p) => !known.has(p)))];
}

/** The command with its placeholders replaced. */
export const expandCommand = (command: readonly string[], paths: HarnessPaths): string[] =>
  command.map((a) => a.replace(/\{(harness|workspace|request|report|artifacts)\}/g, (_, k: keyof HarnessPaths) => paths[k]));

/**
 * vero's minimal environment: PATH the system default (/bin:/usr/bin), LANG C.UTF-8, the temp dir variables this
 * process has, then `env`, then the passthrough names this process has. Nothing else of the sidecar's environment
 * (its secrets, the gateway's keys) reaches the harness or the candidate code it runs.
 */
export function harnessEnvironment(spec: HarnessSpec, from: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = { PATH: '/bin:/usr/bin', LANG: 'C.UTF-8' };
  for (const name of ['TMPDIR', 'TMP', 'TEMP']) if (from[name] !== undefined) env[name] = from[name]!;
  Object.assign(env, spec.env);
  for (const name of spec.passthrough_env) if (from[name] !== undefined) env[name] = from[name]!;
  return env;
}

/** What the harness reads at `{request}` (vero's CommandEvaluationInput). */
export const harnessRequest = (o: { candidate: string; split: string; cases: string[] }) => ({
  schema_version: 1,
  request: {
    candidate: { id: o.candidate, version: o.candidate },
    evaluation_set: { name: o.split, partition: o.split, selection: { type: 'ids', ids: o.cases } },
    parameters: {},
    limits: {},
    seed: null,
  },
});

/** The report the harness writes at `{report}`: its status and metrics (the rest is kept as it is). */
export const HarnessReport = z.looseObject({
  schema_version: z.literal(1).default(1),
  status: z.enum(['success', 'failed', 'cancelled', 'invalid']),
  metrics: z.record(z.string(), z.number().finite()).default({}),
  diagnostics: z.array(z.looseObject({ code: z.string(), message: z.string() })).default([]),
});
export type HarnessReport = z.infer<typeof HarnessReport>;
