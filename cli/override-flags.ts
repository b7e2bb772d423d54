/**
 * The flags that override vero.yaml, as one table (flag → dotted config path → parser): it registers the options
 * with their help, builds the loader's overrides, and tells the loader which flag set which path, so a bad value
 * is blamed on the flag (`--concurrency: Too small …`), not on the file.
 */
import { Command } from 'commander';
import { parseIntFlag } from './int-flag';

interface OverrideFlag {
  /** commander's option spec. */
  option: string;
  /** The parsed option's property. */
  attr: string;
  /** The vero.yaml path it sets. */
  path: string;
  help: string;
  parse?: (v: string) => unknown;
}

const listOf = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export const START_EVAL_OVERRIDES: OverrideFlag[] = [
  {
    option: '--concurrency <n>',
    attr: 'concurrency',
    path: 'execution.concurrency',
    help: 'tasks in flight',
    parse: parseIntFlag('--concurrency'),
  },
  {
    option: '--n-attempts <k>',
    attr: 'nAttempts',
    path: 'harbor.n_attempts',
    help: 'trials per task (-k)',
    parse: parseIntFlag('--n-attempts'),
  },
  {
    option: '--max-retries <r>',
    attr: 'maxRetries',
    path: 'harbor.max_retries',
    help: 'Harbor retries per trial (-r)',
    parse: parseIntFlag('--max-retries'),
  },
  { option: '--tasks <names>', attr: 'tasks', path: 'tasks.names', help: 'comma-separated task names', parse: listOf },
  {
    option: '--harbor-command <cmd>',
    attr: 'harborCommand',
    path: 'harbor.command',
    help: 'the harbor launcher, e.g. "uv run --project {worktree} harbor"',
  },
];

/** The connection flags (withConnection) and the paths they set. */
const CONNECTION_OVERRIDES: Pick<OverrideFlag, 'option' | 'attr' | 'path'>[] = [
  { option: '--address', attr: 'address', path: 'temporal.address' },
  { option: '--namespace', attr: 'namespace', path: 'temporal.namespace' },
  { option: '--task-queue', attr: 'taskQueue', path: 'temporal.task_queue' },
];

export function addOverrideOptions(cmd: Command, table: OverrideFlag[]): Command {
  for (const f of table) cmd.option(f.option, `${f.help} (${f.path})`, f.parse as (v: string) => unknown);
  return cmd;
}

/** The loader's arguments: the overrides (dotted path → value) and which flag set each path. */
export function overridesFrom(
  parsed: object,
  table: OverrideFlag[],
): { overrides: Record<string, unknown>; flags: Record<string, string> } {
  const all = [...table, ...CONNECTION_OVERRIDES];
  const value = (attr: string) => (parsed as Record<string, unknown>)[attr];
  return {
    overrides: Object.fromEntries(all.map((f) => [f.path, value(f.attr)])),
    flags: Object.fromEntries(all.map((f) => [f.path, f.option.split(' ')[0]!])),
  };
}
