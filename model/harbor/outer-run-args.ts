/**
 * `optimizer_harbor_args`: flags a build declares for the OUTER `harbor run -p <task>` that hosts the optimizer
 * (vero's field of that name), checked at build time against the flags `harbor run` accepts in every Harbor
 * vero-harbor supports (0.25.0, 0.26.0). A flag that would break the task, or that is the caller's choice, is
 * refused with the reason. `vero run` puts them after its own defaults and before the caller's `--` arguments,
 * which win. Pure.
 */

import { z } from 'zod';

type Kind = 'switch' | 'text' | 'pair' | { int: number } | 'multiplier' | { choice: readonly string[] };

const RESOURCE_MODES = ['auto', 'limit', 'request', 'guarantee', 'ignore'] as const;

/** What each flag of `harbor run` takes (every name of it), in both supported releases. */
const FLAG_KINDS: [string[], Kind][] = [
  [['--timeout-multiplier'], 'multiplier'],
  [['--agent-timeout-multiplier'], 'multiplier'],
  [['--verifier-timeout-multiplier'], 'multiplier'],
  [['--agent-setup-timeout-multiplier'], 'multiplier'],
  [['--environment-build-timeout-multiplier'], 'multiplier'],
  [['--override-cpus'], 'multiplier'],
  [['-k', '--n-attempts'], { int: 1 }],
  [['-l', '--n-tasks'], { int: 0 }],
  [['-n', '--n-concurrent'], { int: 1 }],
  [['--n-concurrent-agents'], { int: 1 }],
  [['-r', '--max-retries'], { int: 0 }],
  [['--override-memory-mb'], { int: 1 }],
  [['--override-storage-mb'], { int: 1 }],
  [['--override-gpus'], { int: 0 }],
  [['--ak', '--agent-kwarg'], 'pair'],
  [['--ae', '--agent-env'], 'pair'],
  [['--ek', '--environment-kwarg'], 'pair'],
  [['--ve', '--verifier-env'], 'pair'],
  [['--uk', '--user-agent-kwarg'], 'pair'],
  [['--bk', '--bridge-kwarg'], 'pair'],
  [['--pk', '--plugin-kwarg'], 'pair'],
  [['--cpus'], { choice: RESOURCE_MODES }],
  [['--memory'], { choice: RESOURCE_MODES }],
  [['--bridge'], { choice: ['acp'] }],
  [
    ['--api-format'],
    { choice: ['openai_chat_completions', 'openai_responses', 'anthropic_messages', 'google_generate_content', 'bedrock_converse'] },
  ],
  ...(
    [
      // Refused below, but named here for what they take.
      '-p',
      '--path',
      '-d',
      '--dataset',
      '-t',
      '--task',
      '--registry-path',
      '--repo',
      '-i',
      '--include-task-name',
      '-x',
      '--exclude-task-name',
      '-c',
      '--config',
      '-a',
      '--agent',
      '-m',
      '--model',
      '-e',
      '--env',
      '-o',
      '--jobs-dir',
      '--job-name',
      '--env-file',
      '--verifier',
      '--verifier-kwarg',
      '--diff',
      '--mounts',
      '--mounts-json',
      '--extra-docker-compose',
      '--server',
      '--credential-mode',
      '--one-off-secret',
      '--stored-secret',
      '--registry-secret',
      '--retry-include',
      '--retry-exclude',
      '--artifact',
      '--effort',
      '--allow-agent-host',
      '--allow-environment-host',
      '--allow-verifier-host',
      '--load-trajectory',
      '--mcp-config',
      '--skill',
      '--skills',
      '--base-url',
      '--api-key-name',
      '--user-agent',
      '--user-model',
      '--user-persona-path',
      '--user-prompt-template-path',
      '--bridge-prompt-path',
      '--extra-instruction',
      '--extra-instruction-path',
      '--plugin',
      '--share',
      '--org',
    ] as const
  ).map((f): [string[], Kind] => [[f], 'text']),
  ...(
    [
      '--debug',
      '-q',
      '--quiet',
      '--silent',
      '-y',
      '--yes',
      '--force-build',
      '--no-force-build',
      '--delete',
      '--no-delete',
      '--stream',
      '--no-stream',
      '--resume-trajectory',
      '--skip-credential-checks',
      '--upload',
      '--public',
      '--private',
      '--disable-verification',
      '--enable-verification',
      '--dry-run',
      '--install-only',
      '--print-config',
      '-h',
      '--help',
      '--launch',
      '--watch',
      '--use-static-ip',
      '--no-secrets',
    ] as const
  ).map((f): [string[], Kind] => [[f], 'switch']),
];
const KIND = new Map(FLAG_KINDS.flatMap(([names, kind]) => names.map((n) => [n, kind] as const)));

const CALLERS = 'the caller chooses it: pass it after `vero run TASK --`';
const UNSCORED = 'the run would not run or score the optimizer (no reward)';
const HUB = 'for Harbor Hub launches (--launch), which a compiled task does not use';
/** Flags `harbor run` accepts that a build may not declare, with the reason. */
const REFUSED: [string[], string][] = [
  [['-p', '--path', '-d', '--dataset', '-t', '--task', '--registry-path', '--repo'], 'the compiled task is the run’s only task'],
  [['-i', '--include-task-name', '-x', '--exclude-task-name', '-l', '--n-tasks'], 'the compiled task is the run’s only task'],
  [['-c', '--config'], 'a job config may replace the task, its agent or its environment'],
  [['-a', '--agent', '-m', '--model', '-e', '--env'], CALLERS],
  [['-o', '--jobs-dir', '--job-name', '--env-file'], CALLERS],
  [['--verifier', '--verifier-kwarg'], "the reward must be finalize's (the task's own verifier)"],
  [['--disable-verification', '--enable-verification', '--dry-run', '--install-only', '--print-config', '--diff'], UNSCORED],
  [['-h', '--help'], UNSCORED],
  [
    ['--mounts', '--mounts-json', '--extra-docker-compose'],
    "it changes the task's containers (a mount could hand the optimizer the sidecar's held-out state)",
  ],
  [['--launch', '--server', '--watch'], 'a compiled task runs where `vero run` starts it'],
  [['--use-static-ip', '--credential-mode', '--one-off-secret', '--stored-secret', '--no-secrets', '--registry-secret'], HUB],
];
const REASON = new Map(REFUSED.flatMap(([names, why]) => names.map((n) => [n, why] as const)));

/** The flag of an item (`--flag=value` → `--flag`) and its inline value, if any. */
function split(item: string): { flag: string; inline?: string } {
  const eq = item.startsWith('--') ? item.indexOf('=') : -1;
  return eq > 0 ? { flag: item.slice(0, eq), inline: item.slice(eq + 1) } : { flag: item };
}

function valueError(flag: string, kind: Exclude<Kind, 'switch'>, v: string): string | null {
  if (kind === 'text') return v === '' ? `${flag} expects a value` : null;
  if (kind === 'pair') return /^[^=]+=/s.test(v) ? null : `${flag} expects KEY=VALUE, got ${JSON.stringify(v)}`;
  if (kind === 'multiplier') return Number(v) > 0 && v.trim() !== '' ? null : `${flag} expects a positive number, got ${JSON.stringify(v)}`;
  if ('int' in kind)
    return /^\d+$/.test(v) && Number(v) >= kind.int ? null : `${flag} expects an integer ≥ ${kind.int}, got ${JSON.stringify(v)}`;
  return kind.choice.includes(v) ? null : `${flag} expects one of ${kind.choice.join(', ')}, got ${JSON.stringify(v)}`;
}

/** Every problem of `args` as flags of the outer `harbor run`, in order; `--ae`/`--agent-env` only when `allowAgentEnv`. */
export function outerRunArgErrors(args: readonly string[], allowAgentEnv = true): string[] {
  const errors: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const { flag, inline } = split(args[i]!);
    const kind = KIND.get(flag);
    if (!kind) {
      errors.push(`${JSON.stringify(args[i])}: harbor run (0.25.0, 0.26.0) has no such flag`);
      continue;
    }
    const value = kind === 'switch' ? undefined : (inline ?? args[++i]);
    const refused = REASON.get(flag);
    if (refused) errors.push(`${flag} is not allowed: ${refused}`);
    else if (!allowAgentEnv && (flag === '--ae' || flag === '--agent-env'))
      errors.push(`${flag}: set the optimizer's environment with optimizer_env instead`);
    else if (kind === 'switch') {
      if (inline !== undefined) errors.push(`${flag} takes no value`);
    } else {
      const problem = value === undefined ? `${flag} expects a value` : valueError(flag, kind, value);
      if (problem) errors.push(problem);
    }
  }
  return errors;
}

/** vero's `--ae K=V` items become the optimizer's environment (our typed knob); the rest stay flags. */
export function splitAgentEnv(args: readonly string[]): { env: Record<string, string>; rest: string[] } {
  const env: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const { flag, inline } = split(args[i]!);
    if (flag !== '--ae' && flag !== '--agent-env') {
      rest.push(args[i]!);
      continue;
    }
    const value = inline ?? args[++i] ?? '';
    const m = /^([^=]+)=(.*)$/s.exec(value);
    if (m) env[m[1]!] = m[2]!;
    else rest.push(flag, value); // left for the check to name
  }
  return { env, rest };
}

/** The file of a compiled task that `vero run` reads: what the build declared for the outer run. */
export const COMPILED_RUN_FILE = 'vero-run.json';

export const CompiledRun = z.strictObject({
  schema_version: z.literal(1),
  /** optimizer_harbor_args, checked at build time. */
  harbor_args: z.array(z.string()),
  /** The names the build sets in the optimizer's environment: `vero run`'s default tool-call cap leaves them be. */
  optimizer_env: z.array(z.string()),
});
export type CompiledRun = z.infer<typeof CompiledRun>;
