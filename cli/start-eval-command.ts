/** `vero start-eval`: start (or attach to) the durable evaluation of one candidate commit, and follow it with --wait. */
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { loadEvalConfig } from '../infra/eval-config-file';
import type { EvalConfig } from '../model/evaluation/config';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { ConfigError, ExitCode } from '../model/errors';
import type { EvalInput } from '../model/evaluation/input';
import { withTasks } from '../client/eval-results';
import { prepareEvalInput, uncommittedNote } from '../client/eval-input';
import { startOrAttach } from '../client/eval-start';
import { queueCapacity, capacityNote, type QueueCapacity } from '../client/worker-capacity';
import { uiLink } from '../client/connection';
import { resultSummary, taskTable } from './format';
import { addOverrideOptions, overridesFrom, START_EVAL_OVERRIDES } from './override-flags';
import { configPath, ConnectionFlags, connectionSettings, connectTo, withConnection } from './options';
import { print, printJson } from './print';
import { reportFailure } from './failure-report';
import { waitWithProgress } from './wait-progress';

type StartEvalFlags = ConnectionFlags & { candidate: string; wait?: boolean; json?: boolean; force?: boolean; printConfig?: boolean };

export function registerStartEvalCommand(program: Command): void {
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
