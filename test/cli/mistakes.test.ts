/**
 * Every command of the CLI (read from its commander table: a new command joins by being registered) and every
 * MCP tool (read from the server's tool list) against the standard mistakes: no server, no worker for the queue,
 * an unknown id, a finished evaluation, an id that is not an evaluation, a bad flag value, SIGINT. Each answer
 * is an exit code of the failure table (model/failures.ts; 130 for SIGINT), one `error:` line, no stack trace,
 * within a bound (a command that hangs fails its row). One dev server, one worker-less queue, rows concurrent.
 */
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Command } from 'commander';
import { ExitCode } from '../../model/errors';
import { FAILURES } from '../../model/failures';
import { evalFixture, type EvalFixture, tempDir } from '../helpers/fixtures';
import { runVero, VERO } from '../helpers/process';
import { address, client, uniqueQueue } from '../helpers/temporal';

jest.setTimeout(600_000);

/** How long any answer may take: the longest bound of a command is 30 s (an update no worker accepts); the rest is room for a loaded machine. A hang never ends. */
const BOUND_MS = 120_000;
const CODES = new Set<number>([ExitCode.ok, ExitCode.budgetExhausted, ...Object.values(FAILURES).map((f) => f.exitCode)]);
/** The `vero` the rows run: this tree's, or with VERO_UNDER_TEST another build's (to see what a change changed). */
const VERO_BIN = process.env.VERO_UNDER_TEST ?? VERO;
const NOBODY = `eval-${'0'.repeat(40)}-${'0'.repeat(16)}`;

/**
 * Commands the server rows (no server, no worker, ids) and SIGINT do not run, each with why. The test checks every
 * name here is still a command (a stale entry fails). They still take the flag rows.
 */
const EXEMPT: Record<string, string> = {
  dev: 'starts a Temporal server and a worker; its Ctrl-C is test/cli/interrupts.test.ts',
  demo: 'starts a server, a worker and evaluations; its Ctrl-C is test/cli/interrupts.test.ts',
  worker: 'serves a queue until stopped; no server: test/cli/cli.test.ts (exit 3)',
  view: 'serves the web viewer until stopped (test/view)',
  ui: 'opens the Temporal Web UI in a browser',
  serve: 'serves a compiled task’s sidecar until stopped (test/sidecar)',
  mcp: 'a stdio server: its tools are the MCP rows below',
  run: 'runs an outer trial of a compiled task in Docker (test/real-harbor)',
  build: 'compiles a local build.yaml; with --address a build workflow (test/compiler)',
  evals: 'a group: its subcommands talk to the sidecar at VERO_EVAL_URL, not to Temporal (rows: flags)',
};

/**
 * Options whose value is free text, so `x-1` is a value (checked, where it is, by the command itself): they take no
 * bad-value row. The test checks each is still an option of some command.
 */
const FREE_TEXT: Record<string, string> = {
  '--tasks': 'task name globs',
  '--param': 'NAME=VALUE pairs, checked against the build file by the action',
  '--case-id': "the sidecar's case ids",
  '--model': "a model name, as Harbor's -m takes it (any provider/name)",
  '--include-task-name': "task name globs (Harbor's -i)",
  '--exclude-task-name': "task name globs (Harbor's -x)",
  '--include': "task name globs (Harbor's -i, its other spelling)",
  '--exclude': "task name globs (Harbor's -x, its other spelling)",
};

interface Ctx {
  f: EvalFixture;
  /** A running evaluation no worker serves, and a finished (terminated) one. */
  running: string;
  finished: string;
}

/** Each command of the table, with its subcommands (`evals run`…), as argv prefixes. */
function commands(): { argv: string[]; cmd: Command }[] {
  const out: { argv: string[]; cmd: Command }[] = [];
  // The built CLI's table (what `vero` runs), with every command group loaded.
  const { buildProgram } = require('../../dist/cli/main') as typeof import('../../cli/main');
  for (const cmd of buildProgram().commands) {
    out.push({ argv: [cmd.name()], cmd });
    for (const sub of cmd.commands) out.push({ argv: [cmd.name(), sub.name()], cmd: sub });
  }
  return out;
}

const takesEvalId = (cmd: Command) => cmd.registeredArguments[0]?.name() === 'evalId' && cmd.registeredArguments[0]?.required;
const talksToServer = (cmd: Command) => cmd.options.some((o) => o.long === '--address');

/** A plausible value for each argument name; a command with an argument not here fails the test (add it). */
function argSample(name: string, id: string, ctx: Ctx): string[] {
  const samples: Record<string, string[]> = {
    evalId: [id],
    n: ['2'],
    name: ['no-such-pool'],
    A: [id],
    B: [id],
    candidates: ['baseline', 'improved'],
    sql: ['SELECT 1'],
    command: ['status'],
    jobsDir: [tempDir()],
    task: ['no-such-task'],
    harborArgs: [],
    wait: [],
    id: [],
    job_id: ['no-such-job'],
    shell: ['bash'],
  };
  if (!(name in samples)) throw new Error(`argument <${name}>: give the mistakes test a sample value`);
  void ctx;
  return samples[name]!;
}

/** The command's arguments (the row's id where it takes one), and -c where it reads a vero.yaml. */
function argvOf(c: { argv: string[]; cmd: Command }, ctx: Ctx, id: string, extra: string[] = []): string[] {
  const args = c.cmd.registeredArguments.filter((a) => a.required || a.name() === 'sql').flatMap((a) => argSample(a.name(), id, ctx));
  const config = c.cmd.options.some((o) => o.long === '--config') && talksToServer(c.cmd) ? ['-c', ctx.f.configFile] : [];
  const candidate = c.argv[0] === 'start-eval' ? ['--candidate', 'improved'] : [];
  return [...c.argv, ...args, ...config, ...candidate, ...extra];
}

interface Answer {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs vero; with `interruptAfterMs`, sends SIGINT then. Never waits past the bound (the row then fails). */
function vero(args: string[], interruptAfterMs?: number): Promise<Answer> {
  const began = Date.now();
  return new Promise((resolve) => {
    const p = spawn(VERO_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VERO_HOME: tempDir() } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const sigint = interruptAfterMs === undefined ? null : setTimeout(() => p.kill('SIGINT'), interruptAfterMs);
    const kill = setTimeout(() => p.kill('SIGKILL'), BOUND_MS);
    p.on('close', (code, signal) => {
      if (process.env.MISTAKES_TIMES)
        require('node:fs').appendFileSync(process.env.MISTAKES_TIMES, `${Date.now() - began} ${args.join(' ')}\n`);
      clearTimeout(kill);
      if (sigint) clearTimeout(sigint);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - began });
    });
  });
}

/** What every answer must be: a failure-table code (or 130/SIGINT after a Ctrl-C), at most one error line, no stack. */
function wellAnswered(row: string, args: string[], a: Answer, codes?: number[]): string[] {
  const problems: string[] = [];
  const what = `${row}: vero ${args.join(' ')}`;
  if (a.ms >= BOUND_MS) problems.push(`${what}: no answer within ${BOUND_MS / 1000}s (killed)`);
  const code = a.signal === 'SIGINT' ? 130 : a.code;
  if (code === null || !(CODES.has(code) || code === 130)) problems.push(`${what}: exit ${code} (${a.signal}) is not in the failure table`);
  else if (codes && !codes.includes(code)) problems.push(`${what}: exit ${code}, expected ${codes.join(' or ')}\n${a.stderr.slice(-400)}`);
  if (/^\s+at .+[:(]/m.test(a.stderr) || /^\s+at .+[:(]/m.test(a.stdout)) problems.push(`${what}: a stack trace\n${a.stderr.slice(-800)}`);
  if (a.stderr.split('\n').filter((l) => /^(error|Error)\b/.test(l)).length > 1)
    problems.push(`${what}: more than one error line\n${a.stderr}`);
  return problems;
}

/**
 * A mistake commander or an option's parser must refuse, checked in this process on the built CLI's table with
 * every action replaced by a marker: the refusal is exit 2 with one `error:` line, and nothing ran.
 */
async function parseRefusal(row: string, args: string[]): Promise<string[]> {
  const { buildProgram } = require('../../dist/cli/main') as typeof import('../../cli/main');
  const program = buildProgram(args);
  let said = '';
  const quiet = (cmd: Command): void => {
    cmd.configureOutput({ writeErr: (t) => void (said += t), writeOut: () => undefined });
    cmd.action(() => {
      throw new Error('the action ran');
    });
    cmd.commands.forEach(quiet);
  };
  quiet(program);
  const what = `${row}: vero ${args.join(' ')}`;
  try {
    await program.parseAsync(args, { from: 'user' });
    return [`${what}: accepted`];
  } catch (e) {
    const code = (e as { exitCode?: number }).exitCode;
    if ((e as Error).message === 'the action ran') return [`${what}: accepted; the command ran`];
    const lines = said ? said.split('\n').filter((l) => l.startsWith('error')) : [(e as Error).message];
    if (code !== 2 && !(e as { code?: string }).code?.startsWith('commander.')) return [`${what}: exit ${code}: ${(e as Error).message}`];
    return lines.length === 1 ? [] : [`${what}: said ${said || (e as Error).message}`];
  }
}

/** Runs rows a few at a time (2 cores: each `vero` costs a start-up), the next as soon as one ends. */
async function inBatches<T>(jobs: (() => Promise<T>)[], width = 6): Promise<T[]> {
  const out: T[] = new Array<T>(jobs.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < jobs.length; i = next++) out[i] = await jobs[i]!();
  };
  await Promise.all(Array.from({ length: width }, lane));
  return out;
}

let ctx: Ctx;
const queue = uniqueQueue('mistakes'); // no worker ever polls it

beforeAll(async () => {
  const f = evalFixture({ taskQueue: queue, address: address() });
  const start = async (candidate: string) => {
    const r = await runVero(['start-eval', '-c', f.configFile, '--candidate', candidate, '--json']);
    if (r.code !== 0) throw new Error(`start-eval: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { evalId: string }).evalId;
  };
  const [running, finished] = await Promise.all([start('improved'), start('baseline')]);
  const c = await client();
  await c.workflow.getHandle(finished).terminate('the mistakes test: a finished evaluation');
  await c.connection.close();
  ctx = { f, running, finished };
});

afterAll(async () => {
  // What the rows started on the worker-less queue (the evaluations, a race) is terminated.
  const c = await client();
  for await (const w of c.workflow.list({ query: `TaskQueue = '${queue}' AND ExecutionStatus = 'Running'` }))
    await c.workflow
      .getHandle(w.workflowId)
      .terminate('test done')
      .catch(() => undefined);
  await c.connection.close();
});

test('the exemption lists name commands and options that exist', () => {
  const names = new Set(commands().map((c) => c.argv.join(' ')));
  expect(Object.keys(EXEMPT).filter((n) => !names.has(n))).toEqual([]);
  const options = new Set(commands().flatMap((c) => c.cmd.options.filter((o) => o.parseArg).map((o) => o.long)));
  expect(Object.keys(FREE_TEXT).filter((o) => !options.has(o))).toEqual([]);
});

/** Per id row, what each command taking an evaluation id exits with (a command missing here fails the test). */
const ID_ROWS: Record<string, { id: (c: Ctx) => string; codes: Record<string, number[]>; says: RegExp }> = {
  'an unknown id': {
    id: () => NOBODY,
    codes: { status: [2], results: [2], cancel: [2], 'set-concurrency': [2], pause: [2], resume: [2], retry: [2] },
    says: /no such evaluation/,
  },
  'an id that is not an evaluation': {
    id: () => 'vero-spend-pool-somebody',
    codes: { status: [2], results: [2], cancel: [2], 'set-concurrency': [2], pause: [2], resume: [2], retry: [2] },
    says: /is a spend pool .*takes an evaluation id/,
  },
  'a chunk id': {
    id: (c) => `${c.running}/chunk-0`,
    codes: { status: [2], results: [2], cancel: [2], 'set-concurrency': [2], pause: [2], resume: [2], retry: [2] },
    says: /is a chunk of an evaluation/,
  },
  'a finished evaluation': {
    id: (c) => c.finished,
    codes: { status: [0], results: [1], cancel: [0], 'set-concurrency': [2], pause: [2], resume: [2], retry: [2] },
    says: /TERMINATED|terminated/,
  },
  'no worker for the queue': {
    id: (c) => c.running,
    codes: { status: [0], results: [0], cancel: [0], 'set-concurrency': [1], pause: [1], resume: [1], retry: [1] },
    says: /no worker is polling/,
  },
};

test('the CLI: every command against every mistake', async () => {
  const all = commands();
  const served = all.filter((c) => talksToServer(c.cmd) && !(c.argv.join(' ') in EXEMPT));
  const jobs: (() => Promise<string[]>)[] = [];
  // A bad flag, and a bad value for every option that parses its value: refused while parsing (exit 2).
  for (const c of all) {
    const args = [...c.argv, '--bogus-flag'];
    jobs.push(async () => parseRefusal('a bad flag', args));
    for (const o of c.cmd.options.filter((o) => o.parseArg && o.required && !(o.long! in FREE_TEXT)))
      jobs.push(async () => parseRefusal(`a bad value for ${o.long}`, argvOf(c, ctx, NOBODY, [o.long!, 'x-1'])));
  }
  for (const c of served) {
    const args = argvOf(c, ctx, NOBODY, ['--address', '127.0.0.1:1']);
    jobs.push(async () => wellAnswered('no server', args, await vero(args), [ExitCode.temporalUnreachable]));
    // Ctrl-C while it runs (or waits): it ends, at once, without a stack.
    const waiting = argvOf(c, ctx, ctx.running, c.argv[0] === 'start-eval' ? ['--wait'] : []);
    jobs.push(async () => wellAnswered('SIGINT', waiting, await vero(waiting, 2500)));
  }
  for (const [row, r] of Object.entries(ID_ROWS))
    for (const c of served.filter((c) => takesEvalId(c.cmd))) {
      const name = c.argv.join(' ');
      const args = argvOf(c, ctx, r.id(ctx));
      jobs.push(async () => {
        if (!(name in r.codes)) return [`${row}: vero ${name} takes an evaluation id: give it an expected exit code`];
        const a = await vero(args);
        const problems = wellAnswered(row, args, a, r.codes[name]);
        if (a.code !== 0 && !r.says.test(a.stderr)) problems.push(`${row}: vero ${args.join(' ')}: expected ${r.says}, said ${a.stderr}`);
        return problems;
      });
    }
  expect((await inBatches(jobs, 5)).flat()).toEqual([]);
});

/** A plausible value for each MCP tool input (a tool with an input not here fails the test: add it). */
function toolArgs(required: string[], id: string): Record<string, unknown> {
  const samples: Record<string, unknown> = {
    evalId: id,
    a: id,
    b: id,
    raceId: 'race-0000000000000000',
    candidate: 'improved',
    candidates: ['baseline', 'improved'],
    concurrency: 2,
    sql: 'SELECT 1',
  };
  return Object.fromEntries(
    required.map((k) => {
      if (!(k in samples)) throw new Error(`MCP input ${k}: give the mistakes test a sample value`);
      return [k, samples[k]];
    }),
  );
}

test('the MCP tools: every tool against every mistake', async () => {
  const noServer = await vero(['mcp', '-c', ctx.f.configFile, '--address', '127.0.0.1:1']);
  const problems = wellAnswered('no server', ['mcp'], noServer, [ExitCode.temporalUnreachable]);
  const mcp = new McpClient({ name: 'vero-mistakes', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({
      command: VERO_BIN,
      args: ['mcp', '-c', ctx.f.configFile],
      env: process.env as Record<string, string>,
      stderr: 'ignore',
    }),
  );
  try {
    const { tools } = await mcp.listTools();
    const call = async (row: string, name: string, args: Record<string, unknown>, mayAnswer: boolean, says?: RegExp) => {
      const began = Date.now();
      const r = (await mcp.callTool({ name, arguments: args }, undefined, { timeout: BOUND_MS })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      const text = r.content[0]?.text ?? '';
      const what = `${row}: ${name} ${JSON.stringify(args)}`;
      const out: string[] = [];
      if (Date.now() - began >= BOUND_MS) out.push(`${what}: no answer within the bound`);
      // One line, or (bad input) one line per problem, as the CLI says them; never a stack.
      if (r.isError && (!/^(error: |MCP error )/.test(text) || /^\s+at /m.test(text))) out.push(`${what}: not a reason: ${text}`);
      if (!r.isError && !mayAnswer) out.push(`${what}: answered instead of refusing: ${text.slice(0, 300)}`);
      if (/root:|\/bin\/(ba)?sh/.test(text)) out.push(`${what}: echoes a file: ${text.slice(0, 300)}`);
      if (says && !says.test(text)) out.push(`${what}: expected ${says}, said ${text.slice(0, 300)}`);
      return out;
    };
    const jobs: (() => Promise<string[]>)[] = [];
    // A race no worker serves (started here on the worker-less queue; afterAll terminates it).
    const started = (await mcp.callTool({ name: 'race', arguments: { candidates: ['baseline', 'improved'] } })) as {
      content: { text: string }[];
    };
    const unserved = (JSON.parse(started.content[0]!.text) as { raceId: string }).raceId;
    const RACE_ROWS: [string, string, RegExp][] = [
      ['an unknown race', 'race-0000000000000000', /race-0000000000000000: no such race/],
      ['an evaluation id, not a race', ctx.running, /a race id: race-<16 hex digits>/],
      ['no worker for the queue', unserved, /no worker answered within/],
    ];
    for (const t of tools) {
      const required = (t.inputSchema.required ?? []) as string[];
      const schema = (t.inputSchema.properties ?? {}) as Record<string, { type?: string }>;
      const props = Object.keys(schema);
      // A bad value: a number where a string goes, a string where anything else goes.
      const bad = Object.fromEntries(props.map((k) => [k, schema[k]!.type === 'string' ? 12 : 'x-1']));
      if (props.length) jobs.push(() => call('a bad value', t.name, bad, false));
      if (props.includes('config'))
        jobs.push(() => call('a config not allowed', t.name, { ...toolArgs(required, NOBODY), config: '/etc/passwd' }, false));
      if (props.includes('raceId'))
        for (const [row, raceId, says] of RACE_ROWS) jobs.push(() => call(row, t.name, { raceId }, false, says));
      if (!props.includes('evalId') && !props.includes('a')) continue;
      for (const [row, r] of Object.entries(ID_ROWS)) {
        const id = r.id(ctx);
        const mayAnswer =
          ['status', 'results', 'cancel', 'list', 'query'].includes(t.name) &&
          (row === 'a finished evaluation' || row === 'no worker for the queue');
        jobs.push(() => call(row, t.name, toolArgs(required, id), mayAnswer));
      }
    }
    problems.push(...(await inBatches(jobs, 4)).flat());
  } finally {
    await mcp.close();
  }
  expect(problems).toEqual([]);
});

test('a config the MCP client names is never opened unless the operator allowed it', async () => {
  const evil = path.join(tempDir(), 'vero.yaml');
  require('node:fs').writeFileSync(evil, 'agent_repo: /tmp\nharbor: {command: [./evil.sh]}\n');
  const mcp = new McpClient({ name: 'vero-mistakes', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({
      command: VERO_BIN,
      args: ['mcp', '-c', ctx.f.configFile],
      env: process.env as Record<string, string>,
      stderr: 'ignore',
    }),
  );
  try {
    for (const config of [evil, '/etc/passwd']) {
      const r = (await mcp.callTool({ name: 'start_eval', arguments: { config, candidate: 'improved' } })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      expect(r.isError).toBe(true);
      expect(r.content[0]!.text).toBe(
        `error: config: ${config} is not a config this server allows (${ctx.f.configFile}); the operator allows more with vero mcp --allow-config FILE`,
      );
    }
  } finally {
    await mcp.close();
  }
});

test('vero spend-pool of a pool that ended without totals, or that no worker answers for: one line, no stack', async () => {
  const c = await client();
  const [ended, open] = [`mistakes-${Date.now()}-ended`, `mistakes-${Date.now()}-open`];
  try {
    for (const name of [ended, open])
      await c.workflow.start('spendPool', { workflowId: `vero-spend-pool-${name}`, taskQueue: queue, args: [{ name, maxCostUsd: 1 }] });
    await c.workflow.getHandle(`vero-spend-pool-${ended}`).terminate('the mistakes test');
    const [a, b] = await Promise.all([
      vero(['spend-pool', ended, '--address', address()]),
      vero(['spend-pool', open, '--address', address()]),
    ]);
    expect(wellAnswered('ended', ['spend-pool', ended], a, [ExitCode.badInput])).toEqual([]);
    expect(a.stderr).toContain(`error: spend pool "${ended}" ended terminated without totals`);
    expect(wellAnswered('no worker', ['spend-pool', open], b, [ExitCode.evaluationFailed])).toEqual([]);
    expect(b.stderr).toContain(`error: spend pool "${open}": no worker answered within 10s (is one polling ${queue}?`);
  } finally {
    await c.workflow
      .getHandle(`vero-spend-pool-${open}`)
      .terminate('test done')
      .catch(() => undefined);
    await c.connection.close();
  }
});
