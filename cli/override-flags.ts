/**
 * The flags that override vero.yaml, as one table (flag → dotted config path → parser): it registers the options
 * with their help, builds the loader's overrides, and tells the loader which flag set which path, so a bad value
 * is blamed on the flag (`--concurrency: Too small …`), not on the file.
 */
import { Command, Option } from 'commander';
import { parseIntFlag } from './int-flag';
import { ConfigError } from '../model/errors';

interface OverrideFlag {
  /** commander's option spec. */
  option: string;
  /** The vero.yaml path it sets. */
  path: string;
  help: string;
  parse?: (v: string, previous: unknown) => unknown;
  /** A flag that sets several paths (a `KEY=VALUE` per key): the paths and values of its parsed value. */
  expand?: (parsed: unknown) => Record<string, unknown>;
}

const listOf = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** Repeatable flag: every value, in order. */
const repeated = (v: string, previous: unknown): string[] => [...((previous as string[] | undefined) ?? []), v];

/** `--ae K=V`: Harbor keeps the value as the literal string. */
function parseEnvItem(flag: string, item: string): [string, string] {
  const eq = item.indexOf('=');
  if (eq <= 0) throw new ConfigError(`${flag}: expected KEY=VALUE, got "${item}"`);
  return [item.slice(0, eq), item.slice(eq + 1)];
}

/**
 * A `KEY=VALUE` of `--ak` as Harbor parses it: the value read as JSON first (`n=3` a number, `x=true` a boolean),
 * then Python's True/False/None, else the string. A missing `=` is refused, as Harbor refuses it.
 */
export function parseKwarg(flag: string, item: string): [string, unknown] {
  const [key, text] = parseEnvItem(flag, item);
  if (key.includes('.')) throw new ConfigError(`${flag}: "${key}" is not a keyword argument name`);
  try {
    return [key, JSON.parse(text) as unknown];
  } catch {
    const python: Record<string, unknown> = { True: true, False: false, None: null };
    return [key, text in python ? python[text] : text];
  }
}

/** A repeatable `KEY=VALUE` flag: its pairs, each checked as it is given (a bad one is refused by the flag's name). */
const pairs =
  (flag: string, parse: (flag: string, item: string) => [string, unknown]) =>
  (v: string, previous: unknown): [string, unknown][] => [...((previous as [string, unknown][] | undefined) ?? []), parse(flag, v)];

/** The one model of an evaluation: Harbor runs one agent config per `-m`; an evaluation is one. */
function oneModel(v: string, previous: unknown): string {
  if (previous !== undefined)
    throw new ConfigError(
      `-m/--model: given twice ("${String(previous)}", "${v}"); an evaluation runs one model (start one per model, or vero race them)`,
    );
  return v;
}

/** Each key of a `KEY=VALUE` flag as its own path under `base`, so it merges over vero.yaml's mapping. */
const underKeys = (base: string) => (parsed: unknown) =>
  Object.fromEntries((parsed as [string, unknown][]).map(([k, v]) => [`${base}.${k}`, v]));

/** The flags a Harbor user passes to `harbor run`, with Harbor's names and meaning, as an overlay on vero.yaml. */
export const HARBOR_RUN_OVERRIDES: OverrideFlag[] = [
  { option: '-a, --agent <name>', path: 'harbor.agent', help: "Harbor's agent: a built-in name or module.path:Class" },
  {
    option: '-m, --model <name>',
    path: 'harbor.model',
    help: 'the model, e.g. anthropic/claude-sonnet-4-5 (once)',
    parse: oneModel,
  },
  {
    option: '--ak, --agent-kwarg <k=v>',
    path: 'harbor.agent_kwargs',
    help: "an agent constructor argument, the value read as JSON, else True/False/None, else a string (repeatable; merged over vero.yaml's)",
    parse: pairs('--ak', parseKwarg),
    expand: underKeys('harbor.agent_kwargs'),
  },
  {
    option: '--ae, --agent-env <K=V>',
    path: 'harbor.agent_env',
    help: "an environment variable of the agent, kept as a string (repeatable; merged over vero.yaml's)",
    parse: pairs('--ae', parseEnvItem),
    expand: underKeys('harbor.agent_env'),
  },
  {
    option: '-i, --include-task-name <glob>',
    path: 'tasks.include',
    help: "keep the tasks whose name matches (repeatable; replaces vero.yaml's list)",
    parse: repeated,
  },
  {
    option: '-x, --exclude-task-name <glob>',
    path: 'tasks.exclude',
    help: "drop the tasks whose name matches, after -i (repeatable; replaces vero.yaml's list)",
    parse: repeated,
  },
  {
    option: '-l, --n-tasks <n>',
    path: 'tasks.limit',
    help: 'keep the first N tasks after -i and -x, in task-name order',
    parse: parseIntFlag('-l/--n-tasks'),
  },
  {
    option: '-k, --n-attempts <k>',
    path: 'harbor.n_attempts',
    help: 'independent trials per task',
    parse: parseIntFlag('-k/--n-attempts'),
  },
];

/** Other spellings users type for Harbor's flags (hidden in --help): the same option under another name. */
const HARBOR_FLAG_ALIASES: { alias: string; attr: string }[] = [
  { alias: '--include <glob>', attr: 'includeTaskName' },
  { alias: '--exclude <glob>', attr: 'excludeTaskName' },
  { alias: '--limit <n>', attr: 'nTasks' },
];

/** The parsed option's property: commander's camel case of the long name (`--n-attempts` → nAttempts). */
const attrOf = (f: Pick<OverrideFlag, 'option'>) => new Option(f.option).attributeName();

function addAlias(cmd: Command, a: { alias: string; attr: string }, table: OverrideFlag[]): void {
  const target = table.find((f) => attrOf(f) === a.attr)!;
  const opt = new Option(a.alias).hideHelp();
  opt.attributeName = () => a.attr;
  if (target.parse) opt.argParser(target.parse as (v: string, p: unknown) => unknown);
  cmd.addOption(opt);
}

export const START_EVAL_OVERRIDES: OverrideFlag[] = [
  ...HARBOR_RUN_OVERRIDES,
  {
    option: '--concurrency <n>',
    path: 'execution.concurrency',
    help: 'tasks in flight',
    parse: parseIntFlag('--concurrency'),
  },

  {
    option: '--max-retries <r>',
    path: 'harbor.max_retries',
    help: 'Harbor retries per trial (-r)',
    parse: parseIntFlag('--max-retries'),
  },
  { option: '--tasks <names>', path: 'tasks.names', help: 'comma-separated task names', parse: listOf },
  {
    option: '--harbor-command <cmd>',
    path: 'harbor.command',
    help: 'the harbor launcher, e.g. "uv run --project {worktree} harbor"',
  },
];

/** The connection flags (withConnection) and the paths they set. */
const CONNECTION_OVERRIDES: Pick<OverrideFlag, 'option' | 'path'>[] = [
  { option: '--address', path: 'temporal.address' },
  { option: '--namespace', path: 'temporal.namespace' },
  { option: '--task-queue', path: 'temporal.task_queue' },
];

export function addOverrideOptions(cmd: Command, table: OverrideFlag[]): Command {
  for (const f of table) cmd.option(f.option, `${f.help} (${f.path})`, f.parse as (v: string, p: unknown) => unknown);
  for (const a of HARBOR_FLAG_ALIASES) if (table.some((f) => attrOf(f) === a.attr)) addAlias(cmd, a, table);
  return cmd;
}

/** The loader's arguments: the overrides (dotted path → value) and which flag set each path. */
export function overridesFrom(
  parsed: object,
  table: OverrideFlag[],
): { overrides: Record<string, unknown>; flags: Record<string, string> } {
  const all = [...table, ...CONNECTION_OVERRIDES];
  const value = (f: Pick<OverrideFlag, 'option'>) => (parsed as Record<string, unknown>)[attrOf(f)];
  // The long name (`-k, --n-attempts <k>` → --n-attempts): the one --help and the docs spell out.
  const flagOf = (f: Pick<OverrideFlag, 'option'>) => new Option(f.option).long!;
  const expanded = table.flatMap((f) =>
    f.expand && value(f) !== undefined ? Object.entries(f.expand(value(f))).map(([p, v]) => ({ f, p, v })) : [],
  );
  const plain = all.filter((f) => !('expand' in f && f.expand));
  return {
    overrides: { ...Object.fromEntries(plain.map((f) => [f.path, value(f)])), ...Object.fromEntries(expanded.map((e) => [e.p, e.v])) },
    flags: { ...Object.fromEntries(plain.map((f) => [f.path, flagOf(f)])), ...Object.fromEntries(expanded.map((e) => [e.p, flagOf(e.f)])) },
  };
}
