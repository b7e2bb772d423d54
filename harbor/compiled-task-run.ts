/**
 * Runs a compiled task (`vero build` output) the way its user does, `harbor run -p <task> -a <agent> -e docker`,
 * and reads back what the trial produced: the reward, the verifier's finalize details, the sidecar's session
 * snapshot and the agent's logs. Used by `vero demo --optimize` and the real-Harbor tier.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileDurable } from '../infra/atomic-file';
import { PROJECT_ROOT } from '../infra/package-root';
import { compiledJobArgs, compiledTaskArgv, type OuterAgent } from '../model/harbor/argv';
import { gatewayLaunch } from './gateway-launch';
import { compiledRunOf } from './outer-run';
import { cliRunExitCode, launchHarbor } from './launch';
import { harborJobFiles, trialFiles } from '../model/harbor/paths';
import { readJson } from '../infra/json-file';

/** The example optimizer shipped with the examples (a model-free Harbor agent). */
export const EXAMPLE_OPTIMIZER = {
  pythonPath: path.join(PROJECT_ROOT, 'examples', 'optimizer'),
  importPath: 'optimizer_agent:ExampleOptimizer',
};

export interface CompiledTaskRun {
  harbor: string;
  /** Where `harbor` came from, named if it cannot be executed (e.g. ensuredHarborFrom: scripts/ensure-harbor). */
  harborFrom?: string;
  taskDir: string;
  jobsDir: string;
  jobName: string;
  agent: OuterAgent;
  /** Extra environment for the outer harbor (e.g. declared secrets for the sidecar). */
  env?: Record<string, string>;
  /** Where harbor's own output goes (default: <jobsDir>/<jobName>.harbor.log). */
  logFile?: string;
  timeoutMs?: number;
  /**
   * A rescued session to relaunch from, checked and staged by the caller (sidecar/resume-session.ts, as for
   * `vero run --resume-from`): its environment mounts it into the sidecar; its dir is removed once harbor ended.
   */
  resume?: { env: Record<string, string>; dir: string };
}

export interface FinalizeDetails {
  rewards: Record<string, number>;
  commit: string | null;
  reason: string;
  shortlist?: { commit: string; recorded: number; rescored: number }[];
  candidates?: { commit: string; split: string; n_samples: number; mean_score: number; n_errors: number; admin: boolean; seq: number }[];
}

export interface CompiledTaskOutcome {
  exitCode: number;
  trialDir: string | null;
  /** The trial's reward.json (null when the verifier wrote none). */
  reward: Record<string, number> | null;
  exception: { exception_type: string; exception_message: string } | null;
  finalize: FinalizeDetails | null;
  /** Files of the sidecar's session snapshot (artifacts/vero-session). */
  session: string[];
  agentLogs: string;
  logFile: string;
}

/** The argv and environment of the outer harbor: the gateway's flags, the build's, then vero's (shared builder). */
function outerLaunch(run: CompiledTaskRun): { argv: string[]; env: Record<string, string> } {
  // A task with an inference gateway is started as `vero run` does: a producer token for the optimizer.
  const gateway = gatewayLaunch(run.taskDir);
  const pythonPath = run.agent.kind === 'import' ? run.agent.pythonPath : undefined;
  const args = [...compiledRunOf(run.taskDir).harbor_args, ...compiledJobArgs(run)];
  return {
    argv: [run.harbor, ...compiledTaskArgv(run.taskDir, gateway?.harborArgs ?? [], args)],
    env: {
      ...run.env,
      ...gateway?.env,
      ...run.resume?.env,
      ...(pythonPath ? { PYTHONPATH: [pythonPath, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter) } : {}),
    },
  };
}

/**
 * Starts the outer harbor in its own process group: Ctrl-C (or a SIGTERM) here stops it and its trials, as it
 * would in the foreground, instead of leaving it running. The staged session is removed once harbor ended. Its
 * exit code, as the launch decision table says (a CLI process, not an activity).
 */
async function launchOuter(run: CompiledTaskRun, logFile: string): Promise<number> {
  const { argv, env } = outerLaunch(run);
  writeFileDurable(logFile, '', { fsync: false }); // this run's output only
  const interrupt = new AbortController();
  const stop = () => interrupt.abort(new Error('interrupted'));
  process.once('SIGINT', stop).once('SIGTERM', stop);
  const { run: ended } = await launchHarbor({
    argv,
    cwd: process.cwd(),
    isolation: { env, cleanEnv: false },
    logFile,
    signal: interrupt.signal,
    deadline: Date.now() + (run.timeoutMs ?? 30 * 60_000),
    graceMs: 60_000, // Harbor's own teardown of its trials
    stopSignal: 'SIGTERM',
    stopTarget: 'leader',
    forked: false,
  }).finally(() => {
    process.off('SIGINT', stop).off('SIGTERM', stop);
    if (run.resume) fs.rmSync(run.resume.dir, { recursive: true, force: true });
  });
  return cliRunExitCode(ended, 'compiled-run', { launcher: run.harbor, launcherFrom: run.harborFrom }, interrupt.signal.reason);
}

/** What the job's trial produced. */
function trialOutcome(jobDir: string): Omit<CompiledTaskOutcome, 'exitCode' | 'logFile'> {
  const trial = fs.existsSync(jobDir)
    ? (fs.readdirSync(jobDir).find((d) => fs.existsSync(harborJobFiles.trialResult(jobDir, d))) ?? null)
    : null;
  const trialDir = trial ? path.join(jobDir, trial) : null;
  const files = trialDir ? trialFiles(trialDir) : null;
  const result = files ? readJson<{ exception_info: CompiledTaskOutcome['exception'] }>(files.result) : null;
  return {
    trialDir,
    reward: files ? readJson(files.reward) : null,
    exception: result?.exception_info ?? null,
    finalize: files ? readJson<FinalizeDetails>(files.finalize) : null,
    session: files && fs.existsSync(files.session) ? fs.readdirSync(files.session).sort() : [],
    agentLogs: files?.agentDir ?? '',
  };
}

export async function runCompiledTask(run: CompiledTaskRun): Promise<CompiledTaskOutcome> {
  fs.mkdirSync(run.jobsDir, { recursive: true });
  const logFile = run.logFile ?? path.join(run.jobsDir, `${run.jobName}.harbor.log`);
  const exitCode = await launchOuter(run, logFile);
  return { exitCode, ...trialOutcome(path.join(run.jobsDir, run.jobName)), logFile };
}
