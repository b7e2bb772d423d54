/** `vero demo`: the README's main job, end to end on the example (or, with --optimize, the compiler's: cli/demo-optimize.ts). */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import { homePaths } from '../model/paths';
import { type DevServer, startDevServer } from '../infra/dev-server';
import { defaultHome, loadEvalConfig } from '../infra/eval-config-file';
import { CandidateResult } from '../model/evaluation/candidate-result';
import { ConfigError } from '../model/errors';
import { findTemporalCli } from '../infra/temporal-cli';
import { PROJECT_ROOT } from '../infra/package-root';
import { ensureHarbor, makeAgentRepo } from '../infra/foreground';
import { installCliRuntimeLogger } from '../worker/create-worker';
import { connect, uiLink } from '../client/connection';
import { pickBest, withTasks } from '../client/eval-results';
import { prepareEvalInput } from '../client/eval-input';
import { startOrAttach } from '../client/eval-start';
import { resultSummary, taskTable } from './format';
import { handleInterrupts, type Interrupts, killGroup } from './interrupts';
import { TEMPORAL_DEFAULTS, type EvalConfig } from '../model/evaluation/config';
import { HARBOR_VERSION } from '../model/harbor/version';
import { print, printJson } from './print';
import { startWorker } from './host-worker';

const LINKS_DIE =
  "\n(the Web UI links work only while the demo's server runs, and it stops now: `vero demo --keep` keeps it up until Ctrl-C)";
const DEMO_QUEUE = 'vero-demo';

interface DemoFlags {
  home?: string;
  keep?: boolean;
  json?: boolean;
  real?: boolean;
  optimize?: boolean;
  mode?: string;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('end to end on the example: dev server, worker, two candidates evaluated with the Harbor stand-in (or --real Harbor)')
    .option('--home <dir>', 'where the demo keeps its state (default ~/.vero/demo, demo-real with --real, demo-optimize; $VERO_HOME)')
    .option('--real', 'real Harbor 0.25 on Docker (examples/vero.real.yaml; run scripts/ensure-docker first)')
    .option(
      '--optimize',
      'the compiler instead: build the Mode A and Mode B example tasks and run each on real Harbor + Docker with the oracle (baseline) and the example optimizer; prints both rewards and the candidate table (exit 1 unless optimized > baseline)',
    )
    .option('--mode <a|b>', 'with --optimize: only this example (default both)')
    .option('--keep', 'keep the server and worker running afterwards (Ctrl-C stops them)')
    .option('--json', 'print the two results as JSON')
    .action(runDemo);
}

/** `--optimize`: the compiler's demo (cli/demo-optimize.ts), on both example modes or the one asked for. */
async function runOptimizeDemo(o: DemoFlags): Promise<void> {
  installCliRuntimeLogger();
  const { demoOptimize, DEMO_MODES } = require('./demo-optimize') as typeof import('./demo-optimize');
  if (o.mode !== undefined && !(o.mode in DEMO_MODES)) throw new ConfigError(`--mode: expected a or b, got "${o.mode}"`);
  const modes = o.mode ? [o.mode as keyof typeof DEMO_MODES] : (['a', 'b'] as const).slice();
  return demoOptimize({ home: path.resolve(o.home ?? path.join(defaultHome(), 'demo-optimize')), modes, json: o.json });
}

/** The README's main job: two candidates of the example agent evaluated on a dev server of the demo's own. */
async function runDemo(o: DemoFlags): Promise<void> {
  if (o.optimize) return runOptimizeDemo(o);
  // Ctrl-C stops the demo's server and worker and exits (130; 0 once it is only kept up by --keep); a second one
  // kills them at once.
  installCliRuntimeLogger({ ownSignals: true });
  let kept = false;
  const interrupts = handleInterrupts(() => (kept ? 0 : 130));
  // The demo's state goes to the user's home dir, never into the package (a global install is read-only).
  const home = path.resolve(o.home ?? path.join(defaultHome(), o.real ? 'demo-real' : 'demo'));
  const configFile = path.join(PROJECT_ROOT, 'examples', o.real ? 'vero.real.yaml' : 'vero.yaml');
  const harborCommand = o.real ? ensureHarbor(HARBOR_VERSION) : undefined;
  fs.mkdirSync(home, { recursive: true });
  const repo = path.join(home, 'agent-repo');
  makeAgentRepo(repo);
  const server = await startDemoStack(interrupts, home);
  try {
    process.stderr.write(`Temporal dev server ${server.address}, Web UI ${server.uiUrl}\n`);
    const client = await connect(server.address, TEMPORAL_DEFAULTS.namespace);
    const cfg = loadEvalConfig(configFile, {
      ...(harborCommand ? { 'harbor.command': [harborCommand] } : {}),
      agent_repo: repo,
      home,
      'temporal.address': server.address,
      'temporal.task_queue': DEMO_QUEUE,
    });
    const results = await evaluateDemoCandidates(client, cfg, server.uiUrl, o.json);
    printDemoBest(results, server.uiUrl, o);
    if (o.keep) {
      process.stderr.write('server and worker keep running; Ctrl-C stops them\n');
      kept = true;
      await new Promise(() => undefined);
    }
  } finally {
    if (!o.keep) await interrupts.stopAll();
  }
}

/** The demo's own dev server (under its home) and worker, each stopped by Ctrl-C. */
async function startDemoStack(interrupts: Interrupts, home: string): Promise<DevServer> {
  const server = await interrupts.start(
    (onKill) =>
      startDevServer({
        temporalCli: findTemporalCli(),
        ui: true,
        dbFile: homePaths(home).temporalDb,
        logFile: path.join(home, 'temporal.log'),
        onSpawn: (pid) => onKill(killGroup(pid)),
      }),
    (s) => s.stop(),
  );
  await interrupts.start(
    () => startWorker(server.address, { taskQueue: DEMO_QUEUE, shutdownGraceTime: '5s' }),
    (w) => w.stop(),
  );
  return server;
}

/** The example's two candidates, one after the other, each printed as it ends (unless --json). */
async function evaluateDemoCandidates(
  client: Client,
  cfg: EvalConfig,
  uiUrl: string | null,
  json: boolean | undefined,
): Promise<CandidateResult[]> {
  const results: CandidateResult[] = [];
  for (const candidate of ['baseline', 'improved']) {
    const input = await prepareEvalInput(cfg, candidate);
    const { handle, mode } = await startOrAttach(client, input, cfg.temporal.task_queue);
    process.stderr.write(`${mode} ${input.evalId} (candidate ${candidate})\n`);
    const r = withTasks((await handle.result()) as CandidateResult);
    results.push(r);
    if (!json)
      print(
        `\n== ${candidate} ==\n${taskTable(r.tasks ?? [])}\n\n${resultSummary(r)}\nWeb UI    ${uiLink(uiUrl, TEMPORAL_DEFAULTS.namespace, r.evalId)}`,
      );
  }
  return results;
}

function printDemoBest(results: CandidateResult[], uiUrl: string | null, o: DemoFlags): void {
  const best = pickBest(results)!;
  if (o.json) printJson({ results, best: best.evalId, ui: uiUrl });
  else
    print(
      `\nbest: ${best.candidateRef} (${best.candidate.slice(0, 12)}) with ${best.score.toFixed(3)}\nWeb UI: ${uiUrl}${o.keep ? '' : LINKS_DIE}`,
    );
}
