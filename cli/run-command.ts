/** `vero run`: starts a compiled task under `harbor run -p`, with the optimizer's gateway token when it has a gateway. */
import * as fs from 'node:fs';
import { Command } from 'commander';
import { launchInForeground } from '../harbor/launch';
import { compiledTaskArgv } from '../model/harbor/argv';
import { compiledServeConfig, gatewayLaunch } from '../harbor/gateway-launch';
import { compiledRunOf } from '../harbor/outer-run';
import { resumeLaunch } from '../sidecar/resume-session';
import { ConfigError } from '../model/errors';
import {
  agentOf,
  DEFAULT_TOOL_TIMEOUT_SEC,
  OUTER_TRIAL_RETRIES,
  outerRetryArgs,
  TOOL_TIMEOUT_ENV,
  toolTimeoutArgs,
  TRANSPORT_EXCEPTIONS,
} from '../model/harbor/outer-trial';
import { parseIntFlag } from './int-flag';
import { shellWord } from '../model/shell-word';

interface RunFlags {
  harbor: string;
  print?: boolean;
  toolTimeout: number;
  outerRetries: number;
  resumeFrom?: string;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run a compiled task (vero build output) with harbor run -p; with a gateway, the optimizer gets its own scoped token')
    .argument('<task>', 'the task dir (vero build -o)')
    .argument('[harborArgs...]', 'passed to harbor run as they are, after --: e.g. -- -a <agent> -m <model> -e docker')
    .option('--harbor <bin>', 'the harbor executable', 'harbor')
    .option('--print', 'print the environment and the harbor command instead of running it (for CI or a wrapper)')
    .option(
      '--tool-timeout <sec>',
      `cap on each of the optimizer's tool calls, for harnesses that document one (${Object.keys(TOOL_TIMEOUT_ENV).join(', ')}); 0: leave the harness's default`,
      parseIntFlag('--tool-timeout'),
      DEFAULT_TOOL_TIMEOUT_SEC,
    )
    .option(
      '--outer-retries <n>',
      `retries of an outer trial that lost its connection to its sandbox (${TRANSPORT_EXCEPTIONS.join(', ')} only); 0: none`,
      parseIntFlag('--outer-retries'),
      OUTER_TRIAL_RETRIES,
    )
    .option(
      '--resume-from <session>',
      "relaunch from a rescued session: a trial's vero-session/ dir (or the trial dir), or a tar archive of it; checked before anything starts",
    )
    .addHelpText(
      'after',
      `
With a gateway (build.yaml "gateway:"), each run makes a new producer token: its SHA-256 goes to the eval
sidecar (${'$'}VERO_GATEWAY_PRODUCER_TOKEN_SHA256, which the task's compose file requires), the token itself to the
optimizer's agent as --ae OPENAI_API_KEY / OPENAI_BASE_URL / ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL (and
LLM_API_KEY / LLM_BASE_URL, OPENAI_HOST / OPENAI_BASE_PATH for openhands-sdk and goose). The upstream keys stay in
this environment, for the sidecar only. Exit code: harbor's.

Each tool call of a known harness is capped (--tool-timeout, as --ae variables: claude-code's
BASH_DEFAULT_TIMEOUT_MS/BASH_MAX_TIMEOUT_MS, opencode's OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS), above
\`vero eval\`'s own 240 s bound, unless the build set that variable in the optimizer's environment (vero's
agent_env: its value stands; an explicit --tool-timeout overrides it). An outer trial that loses its sandbox
connection is retried once (harbor --max-retries 1 --retry-include ${TRANSPORT_EXCEPTIONS.join(' --retry-include ')});
never on any other error, since a retry restarts the optimizer from zero. Then come the flags the build declared
for this run (build.yaml optimizer_harbor_args, recorded in the task's vero-run.json), then your harbor
arguments: each later one wins (a later --ae NAME=, --max-retries or multiplier).

--resume-from relaunches a trial that died (its sandbox lost, the host restarted): the sidecar gets back the
candidates it evaluated (and their commits, so finalize can grade them), the budget ledger, the gateway's
usage, the evaluation jobs and the results the optimizer was shown. The session Harbor rescued at the end of
the trial (<job>/<trial>/artifacts/vero-session/) is checked first: the same task and build (the build digest
in .vero-build.json; a rebuild of the same build.yaml has the same), a schema this vero reads, every file
present and unchanged (SHA-256s in its session.json). Anything else is refused with exit 2, naming what is
wrong, before harbor starts. The checked copy is mounted read-only into the sidecar (a local Docker
environment), which applies it once. The optimizer starts afresh from the seed repo, with new tokens; its
earlier candidates stay in the running for finalize, and their results files are back where it reads them.

  vero run /tmp/my-task -- -a claude-code -m anthropic/claude-sonnet-4-5 -e docker
  vero run /tmp/my-task --resume-from jobs/<job>/<trial>/artifacts/vero-session -- -a claude-code -e docker`,
    )
    .action(runTask);
}

/** `vero run`: the task checked, a session to resume from checked, then harbor started (or, with --print, its command printed). */
async function runTask(task: string, harborArgs: string[], o: RunFlags, cmd: Command): Promise<void> {
  const hasGateway = compiledTaskHasGateway(task);
  // Checked before anything starts: a bad or foreign session is refused here, not in the sidecar.
  const resume = o.resumeFrom ? await resumeLaunch(task, o.resumeFrom) : null;
  const launch = hasGateway ? gatewayLaunch(task) : null;
  const env = launch || resume ? { ...launch?.env, ...resume?.env } : undefined;
  // The build's declared flags go after vero's defaults and before the caller's, which win; a tool-call
  // variable the build set in the optimizer's environment keeps its value unless --tool-timeout is given.
  const declared = compiledRunOf(task);
  const leave = cmd.getOptionValueSource('toolTimeout') === 'cli' ? [] : declared.optimizer_env;
  const argv = compiledTaskArgv(task, launch?.harborArgs ?? [], [
    ...toolTimeoutArgs(agentOf(harborArgs), o.toolTimeout, leave),
    ...outerRetryArgs(o.outerRetries),
    ...declared.harbor_args,
    ...harborArgs,
  ]);
  if (o.print) {
    if (resume) process.stdout.write(`# the checked session (remove it when the run has ended): ${resume.dir}\n`);
    for (const [k, v] of Object.entries(env ?? {})) process.stdout.write(`export ${k}=${shellWord(v)}\n`);
    process.stdout.write(`${[o.harbor, ...argv].map(shellWord).join(' ')}\n`);
    return;
  }
  if (resume) process.stderr.write(`resuming from the session taken at ${resume.takenAt} (${resume.evaluations} recorded evaluation(s))\n`);
  process.exitCode = await launchInForeground([o.harbor, ...argv], env).finally(
    () => resume && fs.rmSync(resume.dir, { recursive: true, force: true }),
  );
}

/** Whether the task dir (a vero build output, else refused) has a gateway. */
function compiledTaskHasGateway(task: string): boolean {
  try {
    if (!compiledServeConfig(task)) throw new ConfigError('no environment/sidecar/serve.json');
    return Boolean(compiledServeConfig(task)?.gateway);
  } catch (e) {
    throw new ConfigError(`<task>: ${task} is not a vero build output (${(e as Error).message.split('\n')[0]})`);
  }
}
