/** Runs (or resumes) one Harbor job on disk, the way harbor 0.22's `Job` does (reference/harbor.md §1.4-§2). */
import { randomInt, randomUUID, createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentDefaults, AgentSpec, JobSpec, jobConfigFull, jobDefaults, trialConfigDefaults, trialConfigFull } from './config';
import { comparable, dumps, excludeDefaults, f, isPlainObject, naiveLocal, PyFloat, utcZ } from './pyjson';
import { readJson } from '../../infra/json-file';
import { AttemptCounter, Outcome, outcomeFor, Scenario, teardownMsFor } from './scenario';
import { jobStats, TrialRecord } from './stats';
import { policyJson, rewardValid, STANDIN_VERSION, WRITES_FULL_CONFIG, WRITES_REWARD_VALIDITY } from './version';
import { ConfigError, LocalTask } from './tasks';

const SHORTUUID_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Exceptions after which the verifier still runs (the agent phase failed, the environment is alive). */
const VERIFIER_STILL_RUNS = new Set(['AgentTimeoutError', 'NonZeroAgentExitCodeError']);
/** Exceptions raised before the agent ran. */
const BEFORE_AGENT = new Set(['RuntimeError', 'EnvironmentStartTimeoutError', 'HealthcheckError', 'AgentSetupTimeoutError']);

export function trialNameFor(taskDirName: string): string {
  let suffix = '';
  for (let i = 0; i < 7; i++) suffix += SHORTUUID_ALPHABET[randomInt(SHORTUUID_ALPHABET.length)];
  return `${taskDirName.slice(0, 32).replace(/[_-]+$/, '')}__${suffix}`;
}

export interface RunContext {
  cwd: string;
  scenario: Scenario | null;
  counter: AttemptCounter;
  timeScale: number;
  log: (line: string) => void;
}

interface Planned {
  task: LocalTask;
  agent: AgentSpec;
}

interface Running extends Planned {
  trialName: string;
  dir: string;
  config: Record<string, unknown>;
  startedAt: Date;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function writeJson(file: string, value: unknown): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, dumps(value));
  fs.renameSync(tmp, file);
}

function agentInfo(agent: AgentSpec): Record<string, unknown> {
  const name = agent.import_path ? (agent.import_path.split(':').at(-1) ?? agent.import_path) : (agent.name ?? 'oracle');
  let modelInfo: Record<string, unknown> | null = null;
  if (agent.model_name) {
    const i = agent.model_name.indexOf('/');
    modelInfo =
      i >= 0 ? { name: agent.model_name.slice(i + 1), provider: agent.model_name.slice(0, i) } : { name: agent.model_name, provider: null };
  }
  return { name, version: agent.import_path ? 'unknown' : '1.0.0', model_info: modelInfo };
}

function evalKey(agent: AgentSpec, source: string | null): string {
  const info = agentInfo(agent);
  const model = (info.model_info as { name: string } | null)?.name;
  return [info.name as string, ...(model ? [model] : []), source ?? 'adhoc'].join('__');
}

function taskChecksum(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) h.update(path.relative(dir, p)).update(fs.readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex');
}

/** What the job's stats count of a trial. */
function trialRecord(trialName: string, p: Planned, ended: Pick<TrialRecord, 'rewards' | 'exceptionType' | 'costUsd'>): TrialRecord {
  return { trialName, taskKey: p.task.dirName, evalKey: evalKey(p.agent, p.task.source), ...ended };
}

/** A trial's result.json: what its run decided (`ran`) among what every trial's result says. */
function trialResultJson(
  r: Running,
  finishedAt: Date,
  ran: {
    agent_result: unknown;
    verifier_result: unknown;
    exception_info: Record<string, unknown> | null;
    phases: Record<'environment_setup' | 'agent_setup' | 'agent_execution' | 'verifier', unknown>;
    reward_valid: boolean;
  },
) {
  return {
    ...(WRITES_REWARD_VALIDITY ? { schema_version: 1 } : {}),
    id: randomUUID(),
    task_name: r.task.taskName,
    trial_name: r.trialName,
    trial_uri: pathToFileURL(r.dir).href,
    task_id: { path: r.task.recordedPath },
    source: r.task.source,
    task_checksum: taskChecksum(r.task.absPath),
    config: r.config,
    agent_info: agentInfo(r.agent),
    agent_result: ran.agent_result,
    verifier_result: ran.verifier_result,
    verifier_environment_mode: 'shared',
    exception_info: ran.exception_info,
    started_at: utcZ(r.startedAt),
    finished_at: utcZ(finishedAt),
    ...ran.phases,
    step_results: null,
    ...(WRITES_REWARD_VALIDITY ? { reward_valid: ran.reward_valid } : {}),
  };
}

function exceptionInfo(type: string, message: string, at: Date): Record<string, unknown> {
  const traceback = `Traceback (most recent call last):\n  File "harbor/trial/trial.py", line 1, in run\n${type}: ${message}\n`;
  const info = { exception_type: type, exception_message: message, exception_traceback: traceback, occurred_at: utcZ(at) };
  return WRITES_REWARD_VALIDITY ? { ...info, policy: policyJson(type) } : info;
}

export class Job {
  private readonly jobDir: string;
  private readonly records: TrialRecord[] = [];
  private readonly running = new Map<string, Running>();
  private id: string = randomUUID();
  private startedAt = new Date();
  private retries = 0;
  private total = 0;
  private exitCode = 0;
  private readonly config: Record<string, unknown>;

  constructor(
    private readonly spec: JobSpec,
    private readonly tasks: LocalTask[],
    private readonly ctx: RunContext,
  ) {
    this.jobDir = path.resolve(ctx.cwd, spec.jobsDir, spec.jobName);
    this.config = jobConfigFull(spec);
  }

  get dir(): string {
    return this.jobDir;
  }

  /** The config as written to config.json and printed by --print-config. */
  configJson(): Record<string, unknown> {
    if (WRITES_FULL_CONFIG) return this.config;
    const out = excludeDefaults(this.config, jobDefaults());
    // pydantic applies exclude_defaults to every model, including the ones inside lists.
    if (Array.isArray(out.agents)) out.agents = (out.agents as Record<string, unknown>[]).map((a) => excludeDefaults(a, agentDefaults()));
    return out;
  }

  async run(): Promise<number> {
    const planned: Planned[] = [];
    for (let a = 0; a < this.spec.nAttempts; a++)
      for (const task of this.tasks) for (const agent of this.spec.agents) planned.push({ task, agent });
    this.total = planned.length;
    const toRun = this.prepareDir(planned);
    this.writeJobResult(false);
    this.ctx.log(`Starting job ${this.spec.jobName}: ${toRun.length} trial(s) to run, ${planned.length - toRun.length} already done`);
    this.installSignalHandlers();

    let next = 0;
    const lane = async () => {
      while (next < toRun.length) {
        const p = toRun[next++]!;
        await this.runWithRetries(p);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.spec.nConcurrent, toRun.length) }, lane));
    this.writeJobResult(true);
    this.ctx.log(`Job ${this.spec.jobName} finished`);
    this.printSummary();
    return this.exitCode;
  }

  /** Creates the job dir, or resumes it (reference/harbor.md §1.5). Returns the trials still to run. */
  private prepareDir(planned: Planned[]): Planned[] {
    const configFile = path.join(this.jobDir, 'config.json');
    if (!fs.existsSync(configFile)) {
      fs.mkdirSync(this.jobDir, { recursive: true });
      writeJson(configFile, this.configJson());
      writeJson(path.join(this.jobDir, 'lock.json'), this.lockJson());
      return planned;
    }
    const existing = JSON.parse(fs.readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    const strip = (c: Record<string, unknown>) => {
      const full = configAsRead(c);
      delete full.job_name;
      delete full.debug;
      return comparable(full);
    };
    if (strip(existing) !== strip(this.configJson())) {
      throw new ConfigError(
        `Job directory ${this.jobDir} already exists and cannot be resumed with a different config.`,
        'FileExistsError',
      );
    }
    const lockFile = path.join(this.jobDir, 'lock.json');
    if (fs.existsSync(lockFile)) {
      const trialsOf = (lock: { trials?: unknown }) => comparable({ trials: lock.trials ?? null });
      const existingLock = JSON.parse(fs.readFileSync(lockFile, 'utf8')) as { trials?: unknown };
      if (trialsOf(existingLock) !== trialsOf(this.lockJson())) {
        throw new ConfigError(
          `Job directory ${this.jobDir} already has a lock.json that does not match the resolved job lock.`,
          'FileExistsError',
        );
      }
    }
    const prev = readJson<{ id: string; started_at: string; stats?: { n_retries?: number } }>(path.join(this.jobDir, 'result.json'));
    if (prev) {
      // (a torn job result is rewritten below)
      this.id = prev.id;
      this.startedAt = new Date(prev.started_at);
      this.retries = prev.stats?.n_retries ?? 0;
    }
    const remaining = [...planned];
    for (const entry of fs.readdirSync(this.jobDir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const trialDir = path.join(this.jobDir, entry.name);
      const result = readJson<Record<string, unknown>>(path.join(trialDir, 'result.json'));
      if (!result) {
        this.ctx.log(`Removing incomplete trial ${entry.name}`);
        fs.rmSync(trialDir, { recursive: true, force: true });
        continue;
      }
      const cfg = result.config as Record<string, unknown>;
      const idx = remaining.findIndex((p) => this.sameTrialConfig(cfg, p));
      if (idx < 0) throw new ConfigError(`Existing trial ${entry.name} does not match any trial of the job config.`);
      const p = remaining.splice(idx, 1)[0]!;
      this.records.push(this.recordFromDisk(result, trialDir, p));
    }
    return remaining;
  }

  private sameTrialConfig(existing: Record<string, unknown>, p: Planned): boolean {
    const planned = trialConfigFull(this.spec, p.task, p.agent, 'x', this.jobDir, 'x');
    const norm = (c: Record<string, unknown>) => comparable({ ...c, trial_name: null, job_id: null, trials_dir: null });
    return norm(existing) === norm(planned);
  }

  private recordFromDisk(result: Record<string, unknown>, trialDir: string, p: Planned): TrialRecord {
    const vr = result.verifier_result as { rewards: Record<string, number> | null } | null;
    const fromTxt =
      fs.existsSync(path.join(trialDir, 'verifier', 'reward.txt')) && !fs.existsSync(path.join(trialDir, 'verifier', 'reward.json'));
    const rewards = vr?.rewards ? Object.fromEntries(Object.entries(vr.rewards).map(([k, v]) => [k, fromTxt ? new PyFloat(v) : v])) : null;
    const exc = result.exception_info as { exception_type: string } | null;
    return trialRecord(String(result.trial_name), p, {
      rewards,
      exceptionType: exc?.exception_type ?? null,
      costUsd: (result.agent_result as { cost_usd?: number } | null)?.cost_usd ?? null,
    });
  }

  private lockJson(): Record<string, unknown> {
    return {
      schema_version: 3,
      created_at: utcZ(new Date()),
      harbor: { version: STANDIN_VERSION, git_commit_hash: null, is_editable: false },
      n_concurrent_trials: this.spec.nConcurrent,
      retry: (this.config as { retry: unknown }).retry,
      trials: this.tasks.map((t) => ({
        task: { path: t.recordedPath, source: t.source },
        task_digest: `sha256:${taskChecksum(t.absPath)}`,
      })),
    };
  }

  private writeJobResult(finished: boolean): void {
    const now = new Date();
    writeJson(path.join(this.jobDir, 'result.json'), {
      id: this.id,
      started_at: naiveLocal(this.startedAt),
      updated_at: finished ? naiveLocal(now) : utcZ(now),
      finished_at: finished ? naiveLocal(now) : null,
      n_total_trials: this.total,
      stats: jobStats(this.records, { running: this.running.size, total: this.total, retries: this.retries }),
    });
  }

  private retryable(type: string): boolean {
    return !this.spec.retryExclude.includes(type) && (!this.spec.retryInclude || this.spec.retryInclude.includes(type));
  }

  private async runWithRetries(p: Planned): Promise<void> {
    const trialName = trialNameFor(p.task.dirName);
    for (let attempt = 0; ; attempt++) {
      const record = await this.runTrial(p, trialName);
      const exc = record.exceptionType;
      if (exc && attempt < this.spec.maxRetries && this.retryable(exc)) {
        this.retries += 1;
        const b = this.spec.retryBackoff;
        const waitSec = Math.min(b.minWaitSec * b.waitMultiplier ** attempt, b.maxWaitSec);
        this.ctx.log(`Trial ${trialName} failed with ${exc}; retrying in ${waitSec} s (${attempt + 1}/${this.spec.maxRetries})`);
        fs.rmSync(path.join(this.jobDir, trialName), { recursive: true, force: true });
        await sleep(waitSec * 1000 * this.ctx.timeScale);
        continue;
      }
      this.records.push(record);
      // Harbor's progress bar is redrawn on stdout as each trial ends (also with -q). Like Harbor, a broken stdout
      // (its reader died) kills the job here, before the job's result is written.
      fs.writeSync(1, `⠋ ${this.records.length}/${this.total} Running trials...\n`);
      this.writeJobResult(false);
      return;
    }
  }

  private async runTrial(p: Planned, trialName: string): Promise<TrialRecord> {
    const dir = path.join(this.jobDir, trialName);
    const config = trialConfigFull(this.spec, p.task, p.agent, trialName, this.jobDir, this.id);
    fs.mkdirSync(path.join(dir, 'agent'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'verifier'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'artifacts', 'logs', 'artifacts'), { recursive: true });
    writeJson(path.join(dir, 'config.json'), WRITES_FULL_CONFIG ? config : excludeDefaults(config, trialConfigDefaults()));
    writeJson(path.join(dir, 'lock.json'), { task: { path: p.task.recordedPath }, task_digest: `sha256:${taskChecksum(p.task.absPath)}` });
    const trialLog = (line: string) => fs.appendFileSync(path.join(dir, 'trial.log'), `${new Date().toISOString()} ${line}\n`);
    const trial: Running = { trialName, dir, config, task: p.task, agent: p.agent, startedAt: new Date() };
    this.running.set(trialName, trial);
    this.writeJobResult(false);
    trialLog(`${trialName}: starting environment...`);

    const attempt = this.ctx.counter.next(p.task.dirName);
    const outcome = outcomeFor(this.ctx.scenario, {
      task: p.task.dirName,
      attempt,
      agentName: p.agent.name,
      importPath: p.agent.import_path,
      pythonPath: (process.env.PYTHONPATH ?? '').split(path.delimiter).filter(Boolean),
    });
    this.ctx.log(`Trial ${trialName} (task ${p.task.dirName}, attempt ${attempt})`);

    if (outcome.process === 'crash' || outcome.process === 'hang') {
      trialLog(`${trialName}: running agent...`);
      await processFault(outcome.process, '', this.ctx.log);
    }
    if (outcome.process === 'exit') this.exitCode = outcome.exit_code ?? 1;

    const result = await this.simulate(trial, outcome, trialLog);
    this.running.delete(trialName);
    return result;
  }

  private async simulate(p: Running, outcome: Outcome, trialLog: (l: string) => void): Promise<TrialRecord> {
    const { trialName, dir, startedAt } = p;
    let durationMs = outcome.duration_ms ?? 0;
    let exceptionType = outcome.exception ?? null;
    let message = outcome.message ?? (exceptionType ? `${exceptionType} raised during the trial` : '');
    const agentMultiplier = this.spec.agentTimeoutMultiplier ?? this.spec.timeoutMultiplier;
    if (p.task.agentTimeoutSec !== null && durationMs > p.task.agentTimeoutSec * agentMultiplier * 1000 && !exceptionType) {
      const limit = p.task.agentTimeoutSec * agentMultiplier;
      durationMs = limit * 1000;
      exceptionType = 'AgentTimeoutError';
      message = `Agent execution timed out after ${limit} seconds`;
    }
    trialLog(`${trialName}: running agent...`);
    if (outcome.model_call) await callModel(outcome.model_call, path.join(dir, 'agent', 'model-call.txt'));
    if (outcome.transcript !== undefined)
      fs.writeFileSync(
        path.join(dir, 'agent', 'trajectory.json'),
        outcome.transcript.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => process.env[name] ?? ''),
      );
    await sleep(durationMs * this.ctx.timeScale);

    const agentRan = !(exceptionType && BEFORE_AGENT.has(exceptionType));
    const hasReward = outcome.reward !== undefined || outcome.rewards !== undefined;
    const verifierRuns = !this.spec.disableVerification && (!exceptionType || VERIFIER_STILL_RUNS.has(exceptionType) || hasReward);
    let rewards: Record<string, number | PyFloat> | null = null;
    if (agentRan && p.agent.name === 'oracle' && !p.agent.import_path)
      fs.writeFileSync(path.join(dir, 'agent', 'oracle.txt'), 'solve.sh finished\n');
    if (verifierRuns) {
      trialLog(`${trialName}: running verifier...`);
      const vdir = path.join(dir, 'verifier');
      fs.writeFileSync(path.join(vdir, 'test-stdout.txt'), `running /tests/test.sh for ${p.task.dirName}\n`);
      if (outcome.reward_file === 'missing') {
        exceptionType ??= 'RewardFileNotFoundError';
        message = 'No reward file found at /logs/verifier/reward.txt or /logs/verifier/reward.json';
      } else if (outcome.reward_file === 'empty') {
        fs.writeFileSync(path.join(vdir, 'reward.txt'), '');
        exceptionType ??= 'RewardFileEmptyError';
        message = 'Reward file is empty at /logs/verifier/reward.txt';
      } else if (outcome.reward_file === 'invalid') {
        fs.writeFileSync(path.join(vdir, 'reward.txt'), 'not-a-number\n');
        exceptionType ??= 'VerifierOutputParseError';
        message = 'Failed to parse rewards from /logs/verifier/reward.txt';
      } else if (outcome.rewards) {
        fs.writeFileSync(path.join(vdir, 'reward.json'), JSON.stringify(outcome.rewards));
        rewards = { ...outcome.rewards };
      } else {
        const value = outcome.reward ?? 0;
        fs.writeFileSync(path.join(vdir, 'reward.txt'), `${value}\n`);
        rewards = { reward: new PyFloat(value) };
      }
    }
    fs.writeFileSync(path.join(dir, 'artifacts', 'manifest.json'), '[]');
    const workDoneAt = new Date();
    await this.tearDown(trialName, outcome, trialLog);
    const finishedAt = new Date();
    // The phases span the trial's work; its teardown is the time after the verifier, until finished_at.
    const span = (a: number, b: number) => {
      const t0 = startedAt.getTime();
      const d = workDoneAt.getTime() - t0;
      return { started_at: utcZ(new Date(t0 + d * a)), finished_at: utcZ(new Date(t0 + d * b)) };
    };
    const result = trialResultJson(p, finishedAt, {
      agent_result: agentRan
        ? {
            n_input_tokens: outcome.n_input_tokens ?? null,
            n_cache_tokens: null,
            n_output_tokens: outcome.n_output_tokens ?? null,
            cost_usd: f(outcome.cost_usd),
            rollout_details: null,
            metadata: null,
          }
        : null,
      verifier_result: rewards ? { rewards } : null,
      exception_info: exceptionType ? exceptionInfo(exceptionType, message, finishedAt) : null,
      phases: {
        environment_setup: span(0, 0.1),
        agent_setup: agentRan ? span(0.1, 0.2) : null,
        agent_execution: agentRan ? span(0.2, 0.8) : null,
        verifier: verifierRuns ? span(0.8, 1) : null,
      },
      reward_valid: rewardValid(rewards !== null, exceptionType),
    });
    const text = dumps(result);
    const resultFile = path.join(dir, 'result.json');
    if (outcome.result_json === 'garbage') fs.writeFileSync(resultFile, 'this is not json {');
    else if (outcome.result_json === 'truncated') fs.writeFileSync(resultFile, text.slice(0, Math.floor(text.length / 2)));
    else fs.writeFileSync(resultFile, text);
    if (exceptionType)
      fs.writeFileSync(path.join(dir, 'exception.txt'), (result.exception_info as { exception_traceback: string }).exception_traceback);
    trialLog(`${trialName}: done`);
    return trialRecord(trialName, p, { rewards, exceptionType, costUsd: outcome.cost_usd ?? null });
  }

  /**
   * Harbor's teardown after the verifier (its environment stopped): the trial holds its `-n` slot, its verifier's
   * output is on disk, and its result.json is written only once this ends. A scripted fault comes at its end.
   */
  private async tearDown(trialName: string, outcome: Outcome, trialLog: (l: string) => void): Promise<void> {
    trialLog(`${trialName}: stopping environment...`);
    await sleep(teardownMsFor(outcome, this.ctx.scenario, process.env.HARBOR_STANDIN_TEARDOWN_MS) * this.ctx.timeScale);
    if (outcome.teardown_fault) await processFault(outcome.teardown_fault, ' during teardown', this.ctx.log);
  }

  private installSignalHandlers(): void {
    const abort = () => {
      const now = new Date();
      for (const r of this.running.values()) {
        const result = trialResultJson(r, now, {
          agent_result: null,
          verifier_result: null,
          exception_info: exceptionInfo('CancelledError', '', now),
          phases: { environment_setup: null, agent_setup: null, agent_execution: null, verifier: null },
          reward_valid: false,
        });
        fs.writeFileSync(path.join(r.dir, 'result.json'), dumps(result));
        this.records.push(trialRecord(r.trialName, r, { rewards: null, exceptionType: 'CancelledError', costUsd: null }));
      }
      this.running.clear();
      this.writeJobResult(false);
      process.stderr.write('\nAborted!\n');
      process.exit(130);
    };
    process.once('SIGTERM', abort);
    process.once('SIGINT', abort);
  }

  private printSummary(): void {
    const results = `Results written to ${path.join(this.jobDir, 'result.json')}\n`;
    if (this.spec.quiet) return void process.stdout.write(results);
    const byTrial = this.records.map(
      (r) =>
        `${r.trialName}: ${r.exceptionType ?? 'ok'} ${JSON.stringify(r.rewards ? Object.fromEntries(Object.entries(r.rewards).map(([k, v]) => [k, v instanceof PyFloat ? v.value : v])) : null)}`,
    );
    process.stdout.write(
      `${byTrial.join('\n')}\nTrials: ${this.records.length}  Exceptions: ${this.records.filter((r) => r.exceptionType).length}\n`,
    );
    process.stdout.write(results);
    process.stdout.write(`Inspect results by running \`harbor view ${path.dirname(this.jobDir)}\`\n`);
  }
}

/** A scripted fault of the harbor process (`when` in the trial, for the log): it dies now (SIGKILL), or hangs forever. */
async function processFault(fault: 'crash' | 'hang', when: string, log: (line: string) => void): Promise<never> {
  if (fault === 'crash') {
    log(`Simulated crash${when}: the harbor process dies now`);
    process.kill(process.pid, 'SIGKILL');
    return new Promise(() => undefined);
  }
  log(`Simulated hang${when}`);
  return new Promise(() => setInterval(() => undefined, 1 << 30));
}

/** One chat completion as an agent's SDK would send it, from the variables the agent was given. */
async function callModel(model: string, logFile: string): Promise<void> {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const base = process.env.OPENAI_BASE_URL;
  if (!base) return fs.writeFileSync(logFile, 'no OPENAI_BASE_URL\n');
  try {
    const r = await fetch(`${base.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${process.env.OPENAI_API_KEY ?? ''}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'solve the task' }], max_tokens: 5 }),
    });
    await r.text();
    fs.writeFileSync(logFile, `${r.status}\n`);
  } catch (e) {
    fs.writeFileSync(logFile, `error: ${(e as Error).message}\n`);
  }
}

/**
 * A config.json as Harbor reads it back: every missing field, in the job, its sections and each agent, is this
 * version's default (so a job dir written by 0.25 without its defaults compares as 0.26 would read it).
 */
function configAsRead(c: Record<string, unknown>): Record<string, unknown> {
  const defaults = jobDefaults();
  const full: Record<string, unknown> = { ...defaults, ...c };
  for (const [k, d] of Object.entries(defaults)) if (isPlainObject(d) && isPlainObject(c[k])) full[k] = { ...d, ...c[k] };
  if (Array.isArray(full.agents)) full.agents = (full.agents as Record<string, unknown>[]).map((a) => ({ ...agentDefaults(), ...a }));
  return full;
}
