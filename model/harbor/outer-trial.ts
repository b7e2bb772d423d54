/**
 * What `vero run` adds to the outer `harbor run` of a compiled task, besides the gateway: a cap on each of the
 * optimizer's tool calls (so no call outlives the harness's stream; `vero eval` returns within its own, lower
 * bound) and one retry of an outer trial that lost its connection to its sandbox, and only that. Pure.
 */

/** The cap on one optimizer tool call, in seconds: above `vero eval`'s 240 s bound, so it returns first. */
export const DEFAULT_TOOL_TIMEOUT_SEC = 300;

/**
 * Each harness's variables for a tool call's timeout, in milliseconds, where the harness documents them: a
 * harness not listed keeps its own default (it is never sent a variable it would ignore).
 * - claude-code: `BASH_DEFAULT_TIMEOUT_MS` and `BASH_MAX_TIMEOUT_MS` (a ceiling the model cannot raise).
 * - opencode: `OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS` (a default: a call naming its own timeout escapes it).
 */
export const TOOL_TIMEOUT_ENV: Readonly<Record<string, readonly string[]>> = {
  'claude-code': ['BASH_DEFAULT_TIMEOUT_MS', 'BASH_MAX_TIMEOUT_MS'],
  opencode: ['OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS'],
};

/** One retry, since a retry restarts the optimizer from zero (a full run's time and tokens). */
export const OUTER_TRIAL_RETRIES = 1;
/** The exceptions of a lost connection to the sandbox (Harbor's `--retry-include` replaces its include set). */
export const TRANSPORT_EXCEPTIONS = ['StreamTerminatedError', 'ConnectionError'] as const;

/** The agent named in `harbor run` arguments (`-a X`, `--agent X`, `--agent=X`), if any. */
export function agentOf(harborArgs: readonly string[]): string | undefined {
  let agent: string | undefined;
  harborArgs.forEach((a, i) => {
    if ((a === '-a' || a === '--agent') && harborArgs[i + 1]) agent = harborArgs[i + 1];
    else if (a.startsWith('--agent=')) agent = a.slice('--agent='.length);
  });
  return agent;
}

/**
 * `--ae NAME=ms` for the agent's tool-call timeout variables; none for 0 (off) or a harness not listed, and none
 * for a variable in `leave` (the build set it in the optimizer's environment: its value stands).
 */
export function toolTimeoutArgs(agent: string | undefined, sec: number, leave: readonly string[] = []): string[] {
  if (!agent || sec <= 0) return [];
  return (TOOL_TIMEOUT_ENV[agent] ?? []).filter((name) => !leave.includes(name)).flatMap((name) => ['--ae', `${name}=${sec * 1000}`]);
}

/** `--max-retries N --retry-include …` for transport errors only; none for 0. */
export function outerRetryArgs(retries: number = OUTER_TRIAL_RETRIES): string[] {
  if (retries <= 0) return [];
  return ['--max-retries', String(retries), ...TRANSPORT_EXCEPTIONS.flatMap((e) => ['--retry-include', e])];
}
