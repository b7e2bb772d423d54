/**
 * The sidecar's Weights & Biases run (serve.json `wandb`): the sidecar appends what happens, as JSON lines, to
 * `<admin volume>/wandb/events.jsonl`, and a logger process it starts (sidecar/wandb_logger.py, W&B's official
 * Python client) logs each line to the run, keeping its place in the file: a restarted sidecar resumes the same
 * run where it stopped. Everything stays on the trusted side (the admin volume, the sidecar's environment with
 * WANDB_API_KEY); reporting never fails an evaluation or finalize: a logger that cannot start or dies is logged.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileDurable, writeJsonDurable } from '../infra/atomic-file';
import { startHelperProcess } from '../infra/foreground';
import { PROJECT_ROOT } from '../infra/package-root';
import { readJson } from '../infra/json-file';
import { GATEWAY_SCOPES, type ScopeUsage } from '../model/gateway/policy';
import type { ServeConfig } from '../model/compiled-task/serve-config';
import { WANDB_DIR, WANDB_END_WAIT_SEC, WANDB_PYTHON_ENV, type WandbSpec } from '../model/compiled-task/wandb-spec';
import type { EvalOutcome, Engine, EvaluationKind } from './engine';
import type { FinalizeResult } from './finalize';
import type { Gateway } from './gateway/gateway';
import { gatewayPaths } from './gateway/gateway';
import type { Ledger } from './ledger';
import { budgetRow, evaluationRow, finalizeSummary, type OutcomeTotals, usageRow, type WandbRow } from './wandb-events';

export const WANDB_LOGGER_SCRIPT = path.join(PROJECT_ROOT, 'sidecar', 'wandb_logger.py');

/** Where the run's files live on the admin volume. */
export const wandbPaths = (adminVolume: string) => {
  const dir = path.join(adminVolume, WANDB_DIR);
  return {
    dir,
    events: path.join(dir, 'events.jsonl'),
    run: path.join(dir, 'run.json'),
    state: path.join(dir, 'state.json'),
    files: path.join(dir, 'files'),
  };
};

/** How often the gateway's usage is logged when it changed (the optimizer's calls change it between evaluations). */
const USAGE_INTERVAL_MS = 30_000;

export class WandbReporter {
  private readonly paths: ReturnType<typeof wandbPaths>;
  private readonly totals: OutcomeTotals = new Map();
  private logger: ReturnType<typeof startHelperProcess> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastUsage = '';
  private finished = false;

  constructor(
    private readonly cfg: ServeConfig & { wandb: WandbSpec },
    private readonly ledger: Ledger,
    private readonly gateway: Gateway | null,
    private readonly log: (line: string) => void,
  ) {
    this.paths = wandbPaths(cfg.paths.admin_volume);
  }

  /** Writes the run's settings and starts the logger; the gateway's usage is logged every 30 s while it changes. */
  start(): void {
    fs.mkdirSync(this.paths.files, { recursive: true, mode: 0o700 });
    const { mode, ...spec } = this.cfg.wandb;
    writeJsonDurable(
      this.paths.run,
      { ...spec, mode, task: this.cfg.task_name, dir: this.paths.dir, events: this.paths.events, state: this.paths.state },
      { mode: 0o600 },
    );
    const python = process.env[WANDB_PYTHON_ENV] || 'python3';
    const child = startHelperProcess(python, [WANDB_LOGGER_SCRIPT, this.paths.run], (line) => this.log(`wandb: ${line}`));
    child.on('error', (e) => this.log(`wandb: the logger (${python}) did not start: ${e.message}; W&B reporting is off`));
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null) this.log(`wandb: the logger exited with ${code}; W&B reporting is off until the sidecar restarts`);
      this.logger = null;
    });
    this.logger = child;
    this.timer = setInterval(() => this.logUsage(), USAGE_INTERVAL_MS).unref();
  }

  /** An evaluation (the optimizer's or a trusted one): its row, the budgets left, the usage; its trace with log_traces. */
  evaluated(out: EvalOutcome, kind: EvaluationKind): void {
    this.safely(() => {
      const id = createHash('sha256')
        .update(JSON.stringify([out.commit, out.split, kind, out.samples.map((s) => s.id), Date.now()]))
        .digest('hex')
        .slice(0, 16);
      this.append({ type: 'log', row: { ...evaluationRow(id, out, kind, this.totals), ...this.budgets(), ...this.usage() } });
      if (this.cfg.wandb.log_traces) this.artifact(`trace-${id}`, 'evaluation_trace', [[`${id}.json`, JSON.stringify({ kind, ...out })]]);
    });
  }

  /** Finalize's result: the last budgets and usage, the gateway's request log (log_traces), the summary; the run ends. */
  finalized(r: FinalizeResult): void {
    this.safely(() => {
      this.append({ type: 'log', row: { ...this.budgets(), ...this.usage() } });
      if (this.cfg.wandb.log_traces) this.requestLogArtifact();
      this.append({ type: 'finish', summary: finalizeSummary(r), exit_code: r.commit === null ? 1 : 0 });
      this.finished = true;
    });
  }

  /** Stops the logger: after finalize it is given a few seconds to end the run; else it is stopped (the run resumes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    const child = this.logger;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (!this.finished) child.kill('SIGTERM');
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 4_000).unref());
    if ((await Promise.race([exited, timeout])) === 'timeout') child.kill('SIGKILL');
  }

  /** The gateway's usage row, when it changed since the last one logged. */
  private logUsage(): void {
    this.safely(() => {
      const row = this.usage();
      if (Object.keys(row).length) this.append({ type: 'log', row });
    });
  }

  private usage(): WandbRow {
    if (!this.gateway) return {};
    const usage: Record<string, ScopeUsage> = {};
    for (const s of GATEWAY_SCOPES) usage[s] = this.gateway.meter.usage(s);
    const key = JSON.stringify(usage);
    if (key === this.lastUsage) return {};
    this.lastUsage = key;
    return usageRow(usage);
  }

  private budgets(): WandbRow {
    return budgetRow(Object.fromEntries(this.cfg.budgets.map((b) => [b.split, this.ledger.remaining(b.split)])));
  }

  /** The gateway's request log files (the current one and the rotated ones), copied now, as one artifact. */
  private requestLogArtifact(): void {
    const log = gatewayPaths(this.cfg.paths.admin_volume).requestLog;
    const dir = path.dirname(log);
    if (!fs.existsSync(dir)) return;
    const names = fs.readdirSync(dir).filter((n) => n === path.basename(log) || n.startsWith(`${path.basename(log)}.`));
    if (names.length)
      this.artifact(
        'inference-requests',
        'inference_request_log',
        names.map((n) => [n, fs.readFileSync(path.join(dir, n))]),
      );
  }

  /** Files copied under the run's files dir (what the logger uploads is what was there now), then the artifact's line. */
  private artifact(name: string, type: string, files: [string, string | Buffer][]): void {
    const dir = fs.mkdtempSync(path.join(this.paths.files, `${name}-`));
    for (const [rel, content] of files) writeFileDurable(path.join(dir, rel), content, { mode: 0o600, fsync: false });
    this.append({ type: 'artifact', name, artifact_type: type, files: files.map(([rel]) => ({ name: rel, path: path.join(dir, rel) })) });
  }

  private append(event: Record<string, unknown>): void {
    fs.appendFileSync(this.paths.events, `${JSON.stringify(event)}\n`, { mode: 0o600 });
  }

  private safely(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.log(`wandb: could not record an event (${(e as Error).message}); the evaluation is unaffected`);
    }
  }
}

/** The task's W&B reporter, started, and fed by the engine's evaluations (null when the task reports to no run). */
export function startWandbReporter(cfg: ServeConfig, engine: Engine, ledger: Ledger, gateway: Gateway | null, log: (line: string) => void) {
  if (!cfg.wandb) return null;
  const reporter = new WandbReporter({ ...cfg, wandb: cfg.wandb }, ledger, gateway, log);
  reporter.start();
  engine.listeners.push((out, kind) => reporter.evaluated(out, kind));
  return reporter;
}

/**
 * Removes the links W&B's client leaves beside a run (`latest-run`, the debug logs' links into its home's cache):
 * they point at paths of the sidecar's container, dangling wherever the rescued dir is read. The logger may still
 * be writing: an entry gone before it is read is skipped.
 */
function dropSymlinks(dir: string): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if (['ENOENT', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '')) return;
    throw e;
  }
  for (const e of entries) {
    const f = path.join(dir, e.name);
    if (e.isSymbolicLink()) fs.rmSync(f, { force: true });
    else if (e.isDirectory()) dropSymlinks(f);
  }
}

/** How long ending an offline run waits for the logger to write it out (W&B's client flushes the run as it ends). */
const END_WAIT_MS = WANDB_END_WAIT_SEC * 1000;

/**
 * Ends an offline run where it stands (the task's collect step, `vero snapshot`): W&B's client writes an offline
 * run's file out only as the run ends, and the run's dir goes with the sidecar, so the trial rescues it (Harbor
 * collects before the verifier) only ended. What the sidecar logs after that (finalize's rows and summary) stays in
 * events.jsonl; an online run is left running. Returns what happened, for the collect step's output; the run's dir
 * keeps no links however it ends.
 */
export async function endOfflineRun(cfg: ServeConfig): Promise<string> {
  const p = wandbPaths(cfg.paths.admin_volume);
  if (cfg.wandb?.mode !== 'offline' || !fs.existsSync(p.run)) return 'no offline W&B run';
  try {
    return await waitForRunEnd(p);
  } finally {
    dropSymlinks(p.dir);
  }
}

/** Whether the logger's state says the run ended (a state file being written says not yet). */
function runFinished(stateFile: string): boolean {
  return readJson<{ finished?: boolean }>(stateFile)?.finished === true;
}

async function waitForRunEnd(p: ReturnType<typeof wandbPaths>): Promise<string> {
  if (runFinished(p.state)) return 'the offline W&B run had ended';
  fs.appendFileSync(p.events, `${JSON.stringify({ type: 'finish', summary: { 'vero/ended_at': 'collect' }, exit_code: 0 })}\n`, {
    mode: 0o600,
  });
  for (const until = Date.now() + END_WAIT_MS; Date.now() < until; ) {
    if (runFinished(p.state)) return `the offline W&B run ended: ${p.dir}`;
    await new Promise((r) => setTimeout(r, 200));
  }
  return `the offline W&B run did not end within ${WANDB_END_WAIT_SEC} s (is its logger running?): ${p.dir} is rescued as it is`;
}
