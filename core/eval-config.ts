/**
 * `vero.yaml`: what to evaluate and how. One zod schema; CLI flags are an overlay applied before validation;
 * unknown keys are errors naming their path; relative paths resolve against the file.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { MAX_CONFIG_BYTES, readRegularFile } from './bounded-read';
import { DurationSeconds } from './durations';
import { ConfigError, formatZodIssues } from './errors';
import { HarborSection } from './harbor-config';

export const TaskSource = z
  .strictObject({
    /** A local dataset dir or a single task dir: `harbor run -p`. */
    path: z.string().min(1).optional(),
    /** A registry dataset `name[@version]` or `org/name[@ref]`: `harbor run -d`. */
    dataset: z.string().min(1).optional(),
    /** A local registry.json for `dataset` (`--registry-path`). */
    registry_path: z.string().min(1).optional(),
  })
  .superRefine((s, ctx) => {
    if ((s.path === undefined) === (s.dataset === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'expected exactly one of `path` (local tasks, -p) or `dataset` (registry, -d)' });
    }
    if (s.registry_path && !s.dataset) ctx.addIssue({ code: 'custom', path: ['registry_path'], message: 'only valid with `dataset`' });
  });

export const TaskSelection = z.strictObject({
  source: TaskSource,
  /** Explicit task names (dir basenames; `org/name` for registry packages). */
  names: z.array(z.string().min(1)).optional(),
  include: z.array(z.string().min(1)).optional(),
  exclude: z.array(z.string().min(1)).optional(),
  /** A split of a partition file: `{splits: {train: [...], test: [...]}}` (YAML or JSON). */
  partition: z.strictObject({ file: z.string().min(1), split: z.string().min(1) }).optional(),
});

export const Scoring = z.strictObject({
  /** The reward to read; default `pass`, then `reward`, then the mean of all rewards. */
  reward_key: z.string().min(1).optional(),
  /** Per-task aggregation over attempts: the best trial, or the mean over scored attempts. */
  aggregate: z.enum(['best', 'mean']).default('best'),
  /** The evaluation is `failed` when errored tasks / all tasks reaches this. */
  error_rate_threshold: z.number().min(0).max(1).default(0.25),
});

/** Node's timers overflow past 2^31 ms (about 596 h); durations are kept well below. */
const MAX_TIMER_SEC = 1_800_000;

export const Execution = z.strictObject({
  /** Tasks (harbor processes) in flight per evaluation. */
  concurrency: z.number().int().min(1).max(1000).default(4),
  /** Wall-clock limit of one task's harbor run; finished trials are salvaged when it expires. At most 500h. */
  task_timeout: DurationSeconds.pipe(z.number().max(MAX_TIMER_SEC, 'expected at most 500h (1800000 s)')).default(7200),
  /** Runs of a task whose trials all failed for infrastructure reasons (Temporal activity attempts). */
  task_attempts: z.number().int().min(1).max(20).default(3),
  heartbeat_timeout: DurationSeconds.default(60),
  /** Tasks per child workflow; keeps each history far below Temporal's limits. */
  chunk_size: z.number().int().min(1).max(1000).default(500),
  /**
   * How long a stopped harbor (cancel, task timeout, orphan) gets to tear its trials down before it is
   * killed and vero removes what the trials left in Docker. Harbor needs about 21 s per Docker trial.
   */
  stop_grace: DurationSeconds.pipe(z.number().max(3600, 'expected at most 1h')).default(60),
  /** Run `harbor run --dry-run` once before the tasks, so config errors fail in seconds (Harbor ≥ 0.25). */
  preflight: z.boolean().default(true),
});

export const TemporalSection = z.strictObject({
  address: z.string().min(1).default('127.0.0.1:7233'),
  namespace: z.string().min(1).default('default'),
  task_queue: z.string().min(1).default('vero-harbor'),
});

export const EvalConfigFile = z.strictObject({
  /** The git repo whose commits are candidates. */
  agent_repo: z.string().min(1),
  tasks: TaskSelection,
  harbor: HarborSection.default(HarborSection.parse({})),
  scoring: Scoring.default(Scoring.parse({})),
  execution: Execution.default(Execution.parse({})),
  temporal: TemporalSection.default(TemporalSection.parse({})),
  /** Where results, worktrees and job dirs go (default $VERO_HOME, else ~/.vero). */
  home: z.string().min(1).optional(),
});
export type EvalConfig = z.infer<typeof EvalConfigFile> & { home: string; configFile: string | null };

export function defaultHome(): string {
  return process.env.VERO_HOME ?? path.join(os.homedir(), '.vero');
}

/** Sets `value` at a dotted path of a plain object (creating objects on the way). */
export function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[keys.at(-1)!] = value;
}

function resolveFrom(base: string, p: string): string {
  const expanded = p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
  return path.resolve(base, expanded);
}

/**
 * Loads and validates a vero.yaml. `overrides` maps dotted paths to values (from CLI flags) and is applied
 * before validation, so an override is checked exactly like the file.
 */
export function loadEvalConfig(file: string | null, overrides: Record<string, unknown> = {}): EvalConfig {
  let raw: unknown = {};
  const where = file ?? 'command line';
  if (file) {
    let text: string;
    try {
      text = readRegularFile(file, { maxBytes: MAX_CONFIG_BYTES }).toString('utf8');
    } catch (e) {
      throw new ConfigError(`${file}: cannot read the config file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    try {
      raw = parseYaml(text) ?? {};
    } catch (e) {
      throw new ConfigError(`${file}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
    }
    if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`${file}: expected a mapping at the top level`);
  }
  const obj = structuredClone(raw) as Record<string, unknown>;
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) setPath(obj, k, v);
  const parsed = EvalConfigFile.safeParse(obj);
  if (!parsed.success) throw new ConfigError(formatZodIssues(parsed.error.issues, where));
  const cfg = parsed.data;
  const base = file ? path.dirname(path.resolve(file)) : process.cwd();
  const src = cfg.tasks.source;
  // A launcher given as a relative path ("./bin/harbor") is relative to the config file, like every path in it.
  const cmd = Array.isArray(cfg.harbor.command) ? [...cfg.harbor.command] : cfg.harbor.command.trim().split(/\s+/);
  if (cmd[0]!.includes('/') && !path.isAbsolute(cmd[0]!) && !cmd[0]!.includes('{worktree}')) cmd[0] = resolveFrom(base, cmd[0]!);
  return {
    ...cfg,
    harbor: { ...cfg.harbor, command: cmd },
    agent_repo: resolveFrom(base, cfg.agent_repo),
    tasks: {
      ...cfg.tasks,
      source: {
        ...src,
        ...(src.path ? { path: resolveFrom(base, src.path) } : {}),
        ...(src.registry_path ? { registry_path: resolveFrom(base, src.registry_path) } : {}),
      },
      ...(cfg.tasks.partition ? { partition: { ...cfg.tasks.partition, file: resolveFrom(base, cfg.tasks.partition.file) } } : {}),
    },
    home: cfg.home ? resolveFrom(base, cfg.home) : defaultHome(),
    configFile: file ? path.resolve(file) : null,
  };
}
