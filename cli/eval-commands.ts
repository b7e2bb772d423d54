/** start-eval, status, results, cancel, set-concurrency, spend-pool, list, best, report. */
import { rankedByLine } from './ranking-lines';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ApplicationFailure, Client, TerminatedFailure, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { Command } from 'commander';
import { loadEvalConfig } from '../infra/eval-config-file';
import { type EvalConfig, MAX_CONCURRENCY } from '../model/eval-config';
import { CandidateResult, EVALUATION_RANKING, rankResults } from '../model/candidate-result';
import { countedTaskScores, type TaskResult } from '../model/task-result';
import { settledProgress, type Progress } from '../model/progress';
import { tearingDownText } from '../model/progress-details';
import { scoreUncertainty } from '../model/uncertainty';
import { beatsRunnerUp } from '../model/paired-comparison';
import { causeChain, ConfigError, ExitCode, exitCodeForFailure } from '../model/errors';
import { configDigest } from '../model/eval-identity';
import { resolveTasks } from '../harbor/task-source';
import { awaitResult, pickBest, withTasks } from '../client/eval-results';
import { evaluationStartedAt, getProgress, setConcurrency, progressIfAnswered, retryingActivities } from '../client/running-eval';
import { listEvaluations } from '../client/eval-listing';
import { prepareEvalInput, settingsFrom, uncommittedNote } from '../client/eval-input';
import type { EvalInput } from '../model/eval-input';
import { spendPoolState } from '../client/spend-pools';
import { cancelEvaluation } from '../client/cancel';
import { requireEvalId } from '../client/eval-id';
import { startOrAttach } from '../client/eval-start';
import { queueCapacity, capacityNote, type QueueCapacity, workflowPollers } from '../client/worker-capacity';
import { uiLink } from '../client/connection';
import { capsText, fmtCost, fmtScore, resultSummary, table, taskTable } from './format';
import { partialResults } from '../client/partial-results';
import { labelOf } from '../client/view-data';
import { addOverrideOptions, overridesFrom, START_EVAL_OVERRIDES } from './override-flags';
import { commandConfig, configPath, ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { parseIntFlag } from './int-flag';
import { pausedWord, progressBar } from './progress-bar';
import { writeFileDurable } from '../infra/atomic-file';

const print = (s: string): void => void process.stdout.write(`${s}\n`);
const printJson = (v: unknown): void => print(JSON.stringify(v, null, 2));

/** `42s`, `3m05s`, `2h10m`. */
function fmtDuration(sec: number): string {
  const s = Math.round(sec);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Follows an evaluation to its end with a progress bar (a terminal) or progress lines. Ctrl-C stops the waiting,
 * not the evaluation: the bar is stopped first (the terminal gets its line wrapping and cursor back), then
 * `interruptHint` is printed whole, and the process exits 130.
 */
async function waitWithProgress(client: Client, evalId: string, quiet: boolean, interruptHint: string): Promise<CandidateResult> {
  let lastOutage = 0;
  const resultP = awaitResult(client, evalId, (message) => {
    // Said once per outage (not on every retry), and always: a silent wait looks like a hang.
    if (Date.now() - lastOutage > 60_000) process.stderr.write(`\n${message}\n`);
    lastOutage = Date.now();
  });
  let settled = false;
  void resultP.then(
    () => (settled = true),
    () => (settled = true),
  );
  const tty = process.stderr.isTTY && !quiet;
  // `running` counts harbor processes (tasks in flight); the bar fits the terminal, and says when it is paused.
  const bar = tty ? progressBar(process.stderr) : null;
  let started = false;
  process.once('SIGINT', () => {
    if (bar && started) bar.stop();
    process.stderr.write(`\n${interruptHint}\n`);
    process.exit(130);
  });
  let lastLine = '';
  const began = Date.now();
  // The ETA from this process's own observation: tasks finished since it began watching, at that rate.
  let firstDone: number | null = null;
  const etaOf = (p: Progress): string => {
    const from = (firstDone ??= p.done);
    const finished = p.done - from;
    if (finished <= 0) return '-';
    return fmtDuration((((Date.now() - began) / 1000) * (p.total - p.done)) / finished);
  };
  // Why it is not moving, from Temporal (an activity retrying after a failure: the preflight with Docker down),
  // said once per new reason rather than "preparing" for minutes.
  const said = new Set<string>();
  let lastLook = 0;
  const sayWhyStuck = async (p: Progress | null) => {
    if ((p && p.phase !== 'preparing' && p.running > 0) || Date.now() - lastLook < 3000) return;
    lastLook = Date.now();
    const reasons = retryingActivities(await client.workflow.getHandle(evalId).describe()).filter(
      (r) => !said.has(r.replace(/\(attempt \d+\)/, '')),
    );
    for (const r of reasons) said.add(r.replace(/\(attempt \d+\)/, ''));
    if (reasons.length) process.stderr.write(`${bar && started ? '\n' : ''}${reasons.map((r) => `waiting: ${r}`).join('\n')}\n`);
  };
  while (!settled) {
    let polled: Progress | null = null;
    try {
      // Bounded: with no worker a query waits long, and the reason for the wait is what to show meanwhile.
      const p = await client.connection.withDeadline(Date.now() + 5000, () => getProgress(client, evalId));
      polled = p;
      const ran = p.done - (p.notRun ?? 0);
      const mean = ran ? (p.scoreSum / ran).toFixed(3) : '-';
      if (bar) {
        const times = { elapsed: fmtDuration((Date.now() - began) / 1000), left: etaOf(p), paused: pausedWord(p) };
        if (!started) bar.start(p.total, p.done, { running: `${p.running}${tearingDownText(p)}`, errors: p.errors, mean, ...times });
        started = true;
        bar.update(p.done, { running: `${p.running}${tearingDownText(p)}`, errors: p.errors, mean, ...times });
      } else if (!quiet) {
        const capped = p.spendCapReached ? `, ${p.notRun ?? 0} not run (${p.spendCapReached})` : '';
        const elapsed = `${Math.round((Date.now() - began) / 1000)}s elapsed`;
        const line = `[${p.paused ? 'paused' : p.phase}] ${p.done}/${p.total} done, ${p.running} running${tearingDownText(p)}, ${p.errors} errors, mean ${mean}${capped}`;
        if (line !== lastLine) process.stderr.write(`${line}, ${elapsed}\n`);
        lastLine = line;
      }
    } catch {
      /* no worker has picked the workflow up yet */
    }
    await sayWhyStuck(polled).catch(() => undefined);
    await Promise.race([resultP.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
  if (bar && started) {
    // The last frame is the final state, not the last poll's.
    const final = await resultP.catch(() => null);
    const elapsed = fmtDuration((Date.now() - began) / 1000);
    if (final)
      bar.update(final.nTasks, { running: 0, errors: final.nErrors, mean: final.score.toFixed(3), elapsed, left: '0s', paused: '' });
    bar.stop();
  }
  return resultP;
}

export async function completedResults(client: Client, configDigest: string | undefined): Promise<CandidateResult[]> {
  const done = (await listEvaluations(client, { configDigest })).filter((r) => r.workflowStatus === 'COMPLETED');
  return Promise.all(done.map(async (r) => withTasks((await client.workflow.getHandle(r.evalId).result()) as CandidateResult)));
}

/** The config digest that scopes list/best: evaluations of the same tasks, harbor config and scoring. */
function digestScope(o: ConnectionFlags & { all?: boolean }): string | undefined {
  const file = configPath(o);
  if (o.all || !file) return undefined;
  const cfg = commandConfig(file);
  return configDigest(resolveTasks(cfg), settingsFrom(cfg));
}

/** A failed evaluation: its reason on one line, and the exit code of its failure type (2 for a config error). */
function reportFailure(e: unknown): number {
  if (e instanceof WorkflowFailedError) {
    // Terminated (by a person or a tool): said as such, with the reason given, not as a failure of its own.
    const how = e.cause instanceof TerminatedFailure ? 'evaluation terminated' : 'evaluation failed';
    process.stderr.write(`${how}: ${causeChain(e.cause) || e.message}\n`);
    return exitCodeForFailure(e.cause instanceof ApplicationFailure ? e.cause.type : null);
  }
  throw e;
}

type StartEvalFlags = ConnectionFlags & { candidate: string; wait?: boolean; json?: boolean; force?: boolean; printConfig?: boolean };

function registerStartEval(program: Command): void {
  withConnection(
    addOverrideOptions(
      program
        .command('start-eval')
        .description('start (or attach to) the durable evaluation of one candidate commit')
        .requiredOption('--candidate <ref>', 'commit sha, tag or branch of the agent repo')
        .option('--wait', 'follow progress, then print the per-task table')
        .option('--json', 'machine-readable output')
        .option('--force', 're-run even when this exact evaluation already completed')
        .option(
          '--print-config',
          'print the resolved config, the settings the evaluation runs with, its digest and its id as JSON, and start nothing',
        ),
      START_EVAL_OVERRIDES,
    ),
  ).action(startEval);
}

/** `vero start-eval`: resolve the input, start or attach, say what the user should know, then return or wait. */
async function startEval(o: StartEvalFlags): Promise<void> {
  const { cfg, input } = await resolveStartEval(o);
  if (o.printConfig) return printStartEvalConfig(cfg, input);
  const conn = {
    ...connectionSettings({ ...o, address: cfg.temporal.address, namespace: cfg.temporal.namespace, taskQueue: cfg.temporal.task_queue }),
    addressFrom: connectionSettings(o).addressFrom,
  };
  const client = await connectTo(conn, o.json);
  const started = await startOrAttach(client, input, conn.taskQueue, o.force);
  const link = uiLink(conn.uiUrl, conn.namespace, input.evalId);
  const capacity = await queueCapacity(client, conn.taskQueue).catch(() => null);
  if (!o.json) noteStartEval(input, started.otherHome, capacity && capacityNote(input.settings.concurrency, conn.taskQueue, capacity));
  if (!o.wait) return printStarted(o, input, started, capacity, link);
  if (!o.json) process.stderr.write(`${started.mode} ${input.evalId}${link ? `\nWeb UI: ${link}` : ''}\n`);
  await waitAndPrintResult(client, input.evalId, o.json, link);
}

/** The config (with the command line's overrides) and the evaluation's input; a note when HEAD has edits. */
async function resolveStartEval(o: StartEvalFlags): Promise<{ cfg: EvalConfig; input: EvalInput }> {
  const file = configPath(o);
  if (!file) throw new ConfigError('no vero.yaml in this directory or a parent: pass -c FILE');
  const { overrides, flags } = overridesFrom(o, START_EVAL_OVERRIDES);
  const cfg = loadEvalConfig(file, overrides, flags);
  const input = await prepareEvalInput(cfg, o.candidate);
  const edits = await uncommittedNote(cfg.agent_repo, o.candidate, input.candidate);
  if (edits) process.stderr.write(`${edits}\n`);
  return { cfg, input };
}

/** Harbor's --print-config habit: what would run, resolved, without running it (no server needed). */
function printStartEvalConfig(cfg: EvalConfig, input: EvalInput): void {
  const { evalId, configDigest: digest, candidate, candidateRef, tasks, settings, skippedDirs } = input;
  printJson({ evalId, configDigest: digest, candidate, candidateRef, tasks, skippedDirs: skippedDirs ?? [], settings, config: cfg });
}

/** What the user should know before it runs: another home's files, too few worker slots, dirs that are no tasks. */
function noteStartEval(input: EvalInput, otherHome: string | undefined, short: string | null | undefined): void {
  if (otherHome)
    process.stderr.write(
      `note: this evaluation was started with home ${otherHome}; its files are there, not under ${input.home} (--force re-runs it here)\n`,
    );
  // concurrency means what it says, or the user is told why it cannot.
  if (short) process.stderr.write(`${short}\n`);
  const skipped = input.skippedDirs ?? [];
  if (skipped.length)
    process.stderr.write(
      `note: ${skipped.length} dir(s) of the dataset are not Harbor tasks and are not evaluated:\n${skipped.map((d) => `  ${d.dir}: ${d.reason}`).join('\n')}\n`,
    );
}

function printStarted(
  o: StartEvalFlags,
  input: EvalInput,
  started: { mode: string; otherHome?: string },
  capacity: QueueCapacity | null,
  link: string | null,
): void {
  if (!o.json) {
    print(`${started.mode} ${input.evalId}\n${input.tasks.length} task(s), candidate ${input.candidate}${link ? `\nWeb UI: ${link}` : ''}`);
    return;
  }
  printJson({
    evalId: input.evalId,
    mode: started.mode,
    candidate: input.candidate,
    nTasks: input.tasks.length,
    skippedDirs: input.skippedDirs ?? [],
    ...(started.otherHome ? { home: started.otherHome } : {}),
    ...(capacity ? { workers: capacity.workers, workerSlots: capacity.slots } : {}),
    ui: link,
  });
}

/** `--wait`: progress until the result, then the per-task table; the exit code says how it ended. */
async function waitAndPrintResult(client: Client, evalId: string, json: boolean | undefined, link: string | null): Promise<void> {
  // Ctrl-C stops the waiting, not the evaluation: say so, and how to follow or stop it.
  const hint = `stopped waiting; the evaluation goes on. Follow it: vero status ${evalId} · vero results ${evalId} · stop it: vero cancel ${evalId}`;
  let result: CandidateResult;
  try {
    result = withTasks(await waitWithProgress(client, evalId, !!json, hint));
  } catch (e) {
    process.exitCode = reportFailure(e);
    return;
  }
  if (json) printJson({ ...result, ui: link });
  else print(`\n${taskTable(result.tasks ?? [])}\n\n${resultSummary(result)}${link ? `\nWeb UI    ${link}` : ''}`);
  if (result.status === 'failed') process.exitCode = ExitCode.evaluationFailed;
  if (result.status === 'budget_exhausted') process.exitCode = ExitCode.budgetExhausted;
}

function registerStatus(program: Command): void {
  withConnection(
    program.command('status <evalId>').description('progress and state of an evaluation').option('--json', 'machine-readable output'),
  ).action(async (id: string, o: ConnectionFlags & { json?: boolean }) => {
    requireEvalId(id, 'status');
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json);
    const d = await client.workflow.getHandle(id).describe();
    // A query needs a worker: with none polling, say so at once instead of waiting for the query to time out.
    const workers = await workflowPollers(client, d.taskQueue).catch(() => null);
    const asked = workers === 0 ? null : await progressIfAnswered(client, id);
    const progress = asked ? settledProgress(asked, d.status.name) : null;
    const notes = [
      ...(d.status.name === 'RUNNING' ? retryingActivities(d) : []),
      ...(workers === 0 && d.status.name === 'RUNNING'
        ? [`no worker is polling ${d.taskQueue}: nothing runs until one does (vero worker, or vero dev)`]
        : []),
      ...(workers !== 0 && !asked ? ['no worker answered the progress query (busy or just starting)'] : []),
    ];
    const state = {
      evalId: id,
      workflowStatus: d.status.name,
      // The evaluation's first start (a retry or a continue-as-new starts a run of its own).
      startedAt: (await evaluationStartedAt(client, id, d.runId).catch(() => null)) ?? d.startTime,
      finishedAt: d.closeTime ?? null,
      progress,
      notes,
      ui: uiLink(conn.uiUrl, conn.namespace, id),
    };
    if (o.json) return printJson(state);
    print(`${id}: ${d.status.name}`);
    if (progress?.phase === 'cancelling' && d.status.name === 'RUNNING')
      print(
        `cancelling: ${progress.running + (progress.tearingDown ?? 0)} task(s) still being stopped (their harbors tearing down); ${progress.done}/${progress.total} done`,
      );
    else if (progress?.paused && d.status.name === 'RUNNING')
      print(
        `paused since ${progress.paused.since}: no task starts; ${progress.running} running${progress.running ? (progress.paused.stopRunning ? ' (being stopped)' : ' (finishing)') : ''}; ${progress.done}/${progress.total} done, ${progress.errors} errors (vero resume ${id})`,
      );
    else if (progress)
      print(
        d.status.name === 'RUNNING'
          ? `${progress.phase}: ${progress.done}/${progress.total} done, ${progress.running} running${tearingDownText(progress)}, ${progress.errors} errors${progress.concurrency ? `, concurrency ${progress.concurrency}` : ''}`
          : `${d.status.name.toLowerCase()}: ${progress.done}/${progress.total} done, ${progress.errors} errors${progress.stopped ? `, ${progress.stopped} stopped while running` : ''}`,
      );
    if (progress?.spendCapReached)
      print(`spend cap reached: ${progress.spendCapReached}; ${progress.notRun ?? 0} task(s) not run so far, none starts`);
    for (const n of notes) print(`note: ${n}`);
    if (state.ui) print(`Web UI: ${state.ui}`);
  });
}

function registerResults(program: Command): void {
  withConnection(
    program
      .command('results <evalId>')
      .description('per-task results; of an evaluation not completed (running, cancelled, failed), the rows so far, marked partial')
      .option('--json', 'machine-readable output'),
  ).action(async (id: string, o: ConnectionFlags & { json?: boolean }) => {
    requireEvalId(id, 'results');
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json);
    // Not completed (running, cancelled, failed): the rows so far, marked partial, instead of waiting.
    const status = (await client.workflow.getHandle(id).describe()).status.name;
    if (status !== 'COMPLETED') {
      const p = await partialResults(client, id);
      if (o.json) printJson(p);
      else
        print(
          `${taskTable(p.tasks.map((t) => ({ ...t, runs: 0, timedOut: false, jobDir: '' })) as TaskResult[])}\n\npartial   ${p.nWithResults} of ${p.nTasks} task(s) have results so far; the evaluation is ${status.toLowerCase()}${p.pending.length ? ` (${p.pending.length} pending)` : ''}`,
        );
      if (status === 'RUNNING') return;
    }
    let r: CandidateResult;
    try {
      r = withTasks((await client.workflow.getHandle(id).result()) as CandidateResult);
    } catch (e) {
      process.exitCode = reportFailure(e);
      return;
    }
    if (o.json) return printJson(r);
    print(`${taskTable(r.tasks ?? [])}\n\n${resultSummary(r)}`);
  });
}

function registerCancel(program: Command): void {
  withConnection(
    program.command('cancel <evalId>').description('cancel an evaluation (running harbor processes are stopped); only evaluation ids'),
  ).action(async (id: string, o: ConnectionFlags) => {
    requireEvalId(id, 'cancel');
    const client = await connectTo(connectionSettings(o));
    const out = await cancelEvaluation(client, id);
    print(out.cancelled ? `cancellation requested for ${id}` : `${id} has ${out.reason}; nothing to cancel`);
  });
}

function registerSetConcurrency(program: Command): void {
  withConnection(
    program
      .command('set-concurrency <evalId> <n>')
      .description(
        'change how many tasks a running evaluation runs at once: raising starts tasks at once; lowering lets running tasks finish and starts none until fewer than N run (a Temporal update, recorded in its history)',
      )
      .option('--json', 'machine-readable output: {"evalId", "previous", "concurrency"}'),
  ).action(async (id: string, n: string, o: ConnectionFlags & { json?: boolean }) => {
    const concurrency = parseIntFlag('N')(n);
    if (concurrency < 1 || concurrency > MAX_CONCURRENCY) throw new ConfigError(`N: expected 1 to ${MAX_CONCURRENCY}, got ${concurrency}`);
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json);
    const change = await setConcurrency(client, id, concurrency);
    if (o.json) return printJson({ evalId: id, ...change });
    const how =
      change.concurrency < change.previous
        ? '; running tasks finish, and no task starts until fewer than that run'
        : change.concurrency > change.previous
          ? '; more tasks start now'
          : '';
    print(`concurrency of ${id}: ${change.previous} → ${change.concurrency}${how}`);
  });
}

function registerSpendPool(program: Command): void {
  withConnection(
    program
      .command('spend-pool <name>')
      .description(
        "a spend pool's caps, what the evaluations that name it (execution.spend_pool) spent, each and together, and whether its cap was reached (it has ended once reached and none of them runs)",
      )
      .option(
        '--json',
        "machine-readable output: the pool workflow's state (name, maxCostUsd, maxTokens, spent, reached, members, spentBy)",
      ),
  ).action(async (name: string, o: ConnectionFlags & { json?: boolean }) => {
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json);
    let state;
    try {
      state = await spendPoolState(client, name);
    } catch (e) {
      if (e instanceof WorkflowNotFoundError)
        throw new ConfigError(
          `spend pool "${name}": none on this server and namespace (an evaluation with execution.spend_pool starts it)`,
        );
      throw e;
    }
    if (o.json) return printJson(state);
    print(`spend pool ${state.name}: ${capsText(state)}`);
    print(
      `spent     $${state.spent.costUsd.toFixed(4)}, ${state.spent.tokens} tokens${state.spent.unmetered ? ` (${state.spent.unmetered} task(s) reported no cost or tokens)` : ''}`,
    );
    print(`status    ${state.reached ? `cap reached: ${state.reached}` : 'open'}; ${state.members.length} evaluation(s) running on it`);
    const rows = Object.entries(state.spentBy).map(([id, sp]) => [
      id,
      fmtCost(sp.costUsd),
      sp.tokens,
      state.members.includes(id) ? 'running' : 'ended',
    ]);
    if (rows.length) print(`\n${table(['evaluation', 'cost', 'tokens', 'state'], rows)}`);
  });
}

function registerList(program: Command): void {
  withConnection(
    program
      .command('list')
      .description('evaluations with candidates and scores (from Temporal visibility); with -c, only those comparable to that config')
      .option('--all', 'every evaluation, whatever its config')
      .option('--limit <n>', 'at most this many, newest first (default: all, paged through visibility)', parseIntFlag('--limit'))
      .option('--json', 'machine-readable output'),
  ).action(async (o: ConnectionFlags & { json?: boolean; all?: boolean; limit?: number }) => {
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json);
    const rows = await listEvaluations(client, { configDigest: digestScope(o), ...(o.limit ? { limit: o.limit + 1 } : {}) });
    const more = o.limit !== undefined && rows.length > o.limit;
    if (more) rows.length = o.limit!;
    if (more && !o.json) process.stderr.write(`showing the newest ${o.limit}; there are more (raise --limit, or drop it for all)\n`);
    if (o.json) return printJson(rows);
    print(
      table(
        ['evaluation', 'candidate', 'status', 'score', 'cost', 'started'],
        rows.map((r) => [
          r.evalId,
          r.candidate ? labelOf(r) : null,
          r.status,
          fmtScore(r.score),
          fmtCost(r.costUsd),
          r.startedAt.toISOString(),
        ]),
      ),
    );
  });
}

function registerBest(program: Command): void {
  withConnection(
    program
      .command('best')
      .description('the best completed evaluation (score, then fewer errors, then earlier) among those of the config (-c), or --all')
      .option('--all', 'compare every evaluation, whatever its config')
      .option('--json', 'machine-readable output'),
  ).action(async (o: ConnectionFlags & { json?: boolean; all?: boolean }) => {
    const conn = connectionSettings(o);
    const client = await connectTo(conn, o.json);
    const done = (await listEvaluations(client, { configDigest: digestScope(o) })).filter((r) => r.workflowStatus === 'COMPLETED');
    const results = await Promise.all(done.map(async (r) => (await client.workflow.getHandle(r.evalId).result()) as CandidateResult));
    const best = pickBest(results);
    if (!best) {
      process.stderr.write('no completed evaluation\n');
      process.exitCode = ExitCode.evaluationFailed;
      return;
    }
    // Is the winner told apart from the runner-up? The paired rule of `vero compare` (model/paired-comparison.ts).
    const second = rankResults(results)[1];
    const u = (r: CandidateResult) => r.uncertainty ?? scoreUncertainty(countedTaskScores(withTasks(r).tasks ?? []));
    const runnerUp = second
      ? {
          evalId: second.evalId,
          candidateRef: second.candidateRef,
          score: second.score,
          separable: beatsRunnerUp(withTasks(best), withTasks(second)),
        }
      : null;
    if (o.json) return printJson({ ...best, tasks: undefined, uncertainty: u(best), runnerUp, rankedBy: EVALUATION_RANKING });
    print(resultSummary({ ...best, uncertainty: u(best) }));
    print(`ranking   ${rankedByLine(EVALUATION_RANKING)}`);
    if (runnerUp && !runnerUp.separable)
      print(
        `note      not separable from the runner-up ${runnerUp.candidateRef} (${fmtScore(runnerUp.score)}) at 95% by vero compare's paired rule (docs/client.md); evaluate on more tasks to tell them apart`,
      );
  });
}

function registerReport(program: Command): void {
  withConnection(
    program
      .command('report')
      .description(
        'a self-contained HTML page comparing candidates: score chart, the best against the runner-up (paired per-task deltas and interval, as vero compare), per-task matrix, errors, Web UI links',
      )
      .option('-o, --output <file>', 'where to write the page', 'report.html')
      .option('--all', 'every completed evaluation, whatever its config (default with -c: that config only)')
      .option('--title <title>', 'page title'),
  ).action(async (o: ConnectionFlags & { output: string; all?: boolean; title?: string }) => {
    const dir = path.dirname(path.resolve(o.output));
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
      throw new ConfigError(`-o: ${o.output}: the directory ${dir} does not exist (create it first)`);
    const conn = connectionSettings(o);
    const client = await connectTo(conn);
    const results = await completedResults(client, digestScope(o));
    if (results.length === 0) throw new ConfigError('no completed evaluation to report (check -c / --all and the Temporal address)');
    const { renderReport } = require('./report') as typeof import('./report');
    writeFileDurable(
      o.output,
      renderReport(results, {
        title: o.title,
        uiLink: (id) => uiLink(conn.uiUrl, conn.namespace, id),
        generatedAt: new Date().toISOString(),
      }),
    );
    print(`wrote ${o.output} (${results.length} candidate(s))`);
  });
}

/** Every evaluation command, one function each. */
export function registerEvalCommands(program: Command): void {
  registerStartEval(program);
  registerStatus(program);
  registerResults(program);
  registerCancel(program);
  registerSetConcurrency(program);
  registerSpendPool(program);
  registerList(program);
  registerBest(program);
  registerReport(program);
}
