/**
 * Outcomes of simulated trials. See ../README.md for the scenario format.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';

const rewardValue = z.number();

export const Outcome = z
  .object({
    /** One reward, written as verifier/reward.txt (key "reward"). */
    reward: rewardValue.optional(),
    /** Several rewards, written as verifier/reward.json. */
    rewards: z.record(z.string(), rewardValue).optional(),
    /** A broken reward file: the verifier raises the matching Harbor error. */
    reward_file: z.enum(['missing', 'empty', 'invalid']).optional(),
    /** Recorded exception type, e.g. AgentTimeoutError (the verifier still runs) or RuntimeError. */
    exception: z.string().optional(),
    message: z.string().optional(),
    /** Simulated trial length. */
    duration_ms: z.number().nonnegative().optional(),
    /** A broken trial result.json, to exercise collators. */
    result_json: z.enum(['garbage', 'truncated']).optional(),
    /** A process-level fault while this trial runs. */
    process: z.enum(['crash', 'hang', 'exit']).optional(),
    exit_code: z.number().int().optional(),
    /** Token/cost accounting for the trial. */
    cost_usd: z.number().optional(),
    n_input_tokens: z.number().int().nonnegative().optional(),
    n_output_tokens: z.number().int().nonnegative().optional(),
    /**
     * The agent calls this model once, as a model-using agent would: a chat completion at $OPENAI_BASE_URL with
     * $OPENAI_API_KEY (the HTTP status, or the error, goes to agent/model-call.txt).
     */
    model_call: z.string().min(1).optional(),
    /**
     * What the agent writes as its trajectory (`agent/trajectory.json`), `${VAR}` replaced by the harbor process's
     * environment, as an agent that logs what it was given would.
     */
    transcript: z.string().optional(),
    /**
     * Harbor's teardown after the verifier (the environment stopped): this long (× the time scale), with the
     * verifier's output on disk and no trial result.json until it ends. Default: the scenario's, or
     * HARBOR_STANDIN_TEARDOWN_MS, or none.
     */
    teardown_ms: z.number().nonnegative().optional(),
    /** A process-level fault at the end of the teardown wait: `crash` SIGKILLs the harbor process, `hang` never returns. */
    teardown_fault: z.enum(['crash', 'hang']).optional(),
  })
  .strict();
export type Outcome = z.infer<typeof Outcome>;

const OutcomeList = z.union([Outcome, z.array(Outcome).min(1)]);

export const Scenario = z
  .object({
    /** Task-name glob (dir basename) → outcome, or outcomes by attempt (the last one repeats). */
    tasks: z.record(z.string(), OutcomeList).default({}),
    default: OutcomeList.optional(),
    /** Multiplies every simulated wait (trial durations, retry backoff); 0 = no waiting. */
    time_scale: z.number().nonnegative().optional(),
    /** Every trial's teardown wait (an outcome's `teardown_ms` overrides it). */
    teardown_ms: z.number().nonnegative().optional(),
  })
  .strict();
export type Scenario = z.infer<typeof Scenario>;

export function loadScenario(spec: string | undefined): { scenario: Scenario | null; file: string | null } {
  if (!spec) return { scenario: null, file: null };
  const trimmed = spec.trim();
  const isInline = trimmed.startsWith('{');
  const text = isInline ? trimmed : fs.readFileSync(trimmed, 'utf8');
  const parsed = Scenario.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new Error(
      `HARBOR_STANDIN_SCENARIO is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return { scenario: parsed.data, file: isInline ? null : path.resolve(trimmed) };
}

/**
 * Counts attempts per task across invocations, so "attempt 1 fails, attempt 2 passes" spans a retry inside a
 * job, a resumed job, or a later `harbor run`. Each attempt claims a file with O_EXCL, so concurrent processes
 * never share a number.
 */
export class AttemptCounter {
  private readonly memory = new Map<string, number>();
  constructor(private readonly dir: string | null) {
    if (dir) fs.mkdirSync(dir, { recursive: true });
  }

  next(task: string): number {
    if (!this.dir) {
      const n = (this.memory.get(task) ?? 0) + 1;
      this.memory.set(task, n);
      return n;
    }
    const safe = task.replace(/[^A-Za-z0-9._-]/g, '_');
    for (let n = 1; ; n++) {
      try {
        fs.closeSync(fs.openSync(path.join(this.dir, `${safe}.${n}`), 'wx'));
        return n;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
  }
}

/**
 * What the simulated agent can do when no scenario is given: `harbor-standin-agent.json` in the PYTHONPATH
 * entry from which the agent's module (`-a module.path:Class`) would be imported, as real Harbor imports it.
 */
const AgentProfile = z
  .object({
    solves: z.array(z.string()).default([]),
    partial: z.record(z.string(), z.number()).default({}),
    duration_ms: z.number().nonnegative().default(0),
  })
  .strict();

export interface OutcomeContext {
  task: string;
  attempt: number;
  agentName: string | null;
  importPath: string | null;
  /** PYTHONPATH entries, in order. */
  pythonPath: string[];
}

/** The sys.path entry that holds `module.path` (as `module/path.py` or `module/path/__init__.py`), if any. */
export function importRoot(importPath: string, pythonPath: string[]): string | null {
  const rel = importPath.split(':')[0]!.split('.').join(path.sep);
  for (const entry of pythonPath) {
    if (fs.existsSync(path.join(entry, `${rel}.py`)) || fs.existsSync(path.join(entry, rel, '__init__.py'))) return entry;
  }
  return null;
}

/**
 * Why `module.path:Class` could not be imported from these PYTHONPATH entries, in Harbor 0.25's words, or null:
 * the first missing (sub)module (`No module named 'a.b'`), or a module without the class (its source is searched
 * for the name: the stand-in does not run Python).
 */
export function agentImportProblem(importPath: string, pythonPath: string[]): string | null {
  const [mod = '', cls = ''] = importPath.split(':');
  const parts = mod.split('.');
  for (let k = 1; k <= parts.length; k++) {
    const prefix = parts.slice(0, k).join('.');
    if (!importRoot(prefix, pythonPath)) return `Failed to import module '${mod}': No module named '${prefix}'`;
  }
  const root = importRoot(mod, pythonPath)!;
  const rel = path.join(root, ...parts);
  const file = fs.existsSync(`${rel}.py`) ? `${rel}.py` : path.join(rel, '__init__.py');
  const escaped = cls.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  if (!cls || !new RegExp(`\\b${escaped}\\b`).test(fs.readFileSync(file, 'utf8'))) return `Module '${mod}' has no class '${cls}'`;
  return null;
}

function pick(list: Outcome | Outcome[], attempt: number): Outcome {
  if (!Array.isArray(list)) return list;
  return list[Math.min(attempt, list.length) - 1]!;
}

/** The outcome of one trial attempt. Pure apart from reading the agent profile. */
export function outcomeFor(scenario: Scenario | null, ctx: OutcomeContext): Outcome {
  if (scenario) {
    for (const [glob, list] of Object.entries(scenario.tasks)) {
      if (picomatch(glob, { dot: true })(ctx.task)) return pick(list, ctx.attempt);
    }
    if (scenario.default) return pick(scenario.default, ctx.attempt);
  }
  if (!ctx.importPath && ctx.agentName === 'oracle') return { reward: 1 };
  if (!ctx.importPath && ctx.agentName === 'nop') return { reward: 0 };
  const root = ctx.importPath ? importRoot(ctx.importPath, ctx.pythonPath) : null;
  const profileFile = root ? path.join(root, 'harbor-standin-agent.json') : null;
  if (profileFile && fs.existsSync(profileFile)) {
    const profile = AgentProfile.parse(JSON.parse(fs.readFileSync(profileFile, 'utf8')));
    const duration = { duration_ms: profile.duration_ms };
    if (profile.solves.some((g) => picomatch(g, { dot: true })(ctx.task))) return { reward: 1, ...duration };
    for (const [glob, value] of Object.entries(profile.partial)) {
      if (picomatch(glob, { dot: true })(ctx.task)) return { reward: value, ...duration };
    }
    return { reward: 0, ...duration };
  }
  // No scenario and no profile: a stable coin flip on (agent, task).
  const digest = createHash('sha256')
    .update(`${ctx.importPath ?? ctx.agentName}\0${ctx.task}`)
    .digest();
  return { reward: digest[0]! % 2 };
}

/**
 * Harbor's teardown after the verifier, as measured with Harbor 0.26 on Docker (2 cores): `docker compose down`
 * waits Docker's 10 s stop timeout, because the main service's PID 1 (`sh -c "sleep infinity"`) ignores SIGTERM.
 * `HARBOR_STANDIN_TEARDOWN_MS=docker` uses it.
 */
export const DOCKER_TEARDOWN_MS = 10_700;

/** The teardown wait of a trial with this outcome (before the time scale): the outcome's, the scenario's, the environment's. */
export function teardownMsFor(outcome: Outcome, scenario: Scenario | null, env: string | undefined): number {
  if (outcome.teardown_ms !== undefined) return outcome.teardown_ms;
  if (scenario?.teardown_ms !== undefined) return scenario.teardown_ms;
  if (env !== undefined && env.trim() !== '') {
    if (env.trim() === 'docker') return DOCKER_TEARDOWN_MS;
    const ms = Number(env);
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`HARBOR_STANDIN_TEARDOWN_MS: expected milliseconds or "docker", got ${env}`);
    return ms;
  }
  return 0;
}
