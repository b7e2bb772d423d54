/**
 * A race (`vero race`): candidates evaluated on the same tasks in one shared, seeded order, interleaved so
 * that at every decision point each live candidate has run the same first t tasks (paired). After each batch
 * the rule of model/race/decision.ts eliminates the candidates that are worse than the leader at the chosen
 * confidence (an anytime-valid confidence sequence, so deciding after every batch keeps the guarantee).
 *
 * Lanes: `concurrency` runTask activities (the evaluation's own activity) in flight across all candidates,
 * at most one batch beyond the last decision. An eliminated candidate's running tasks are cancelled (their
 * harbor groups stopped) or, with onEliminated 'finish', run to the end. A task already scored for a
 * candidate under the same config digest is reused, never run again. At the end each candidate's rows become
 * an evaluation of its own (child workflow raceEntry, id = its evalId), partial when it did not run every task.
 * Durable: every task's outcome is an activity result in this history; the decisions are recomputed from them
 * on replay in the same order, so a crash changes none.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  executeChild,
  patched,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { FinalizeInput } from '../model/evaluation/activity-payloads';
import { notRunRow, type TaskResult } from '../model/evaluation/task-result';
import { FailureType } from '../model/failures';
import { homePaths } from '../model/paths';
import { type CsKind, makeCs, type SequentialCs } from '../model/race/confidence-sequence';
import { PairedRace, raceHorizon } from '../model/race/decision';
import { type RacePlan, racePlan, weightedMeanCs } from '../model/race/sampling';
import { RaceInput, type RaceResult, type RaceState, startingCandidateState } from '../model/race/types';
import { failedTaskRow, stepActivities, stoppedAlone, taskActivities, taskJobDir } from './activity-policy';
import { raceEntry } from './race-entry';
import { raceQuery } from './race-queries';

const { prepareCandidate } = stepActivities;

const countedScore = (r: TaskResult | undefined): number => (r?.status === 'scored' ? Math.min(1, Math.max(0, r.score ?? 0)) : 0);

export async function raceCandidates(rawInput: RaceInput): Promise<RaceResult> {
  const parsed = RaceInput.safeParse(rawInput);
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(
      `invalid race input: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      FailureType.InvalidInput,
    );
  const race = new Race(parsed.data);
  setHandler(raceQuery, () => race.state);
  return race.run();
}

class Race {
  readonly state: RaceState;
  private readonly order: string[];
  private readonly k: number;
  private readonly stats: PairedRace;
  private readonly ownCs: SequentialCs[];
  /** rows[c].get(task): candidate c's row for a task (run here, or reused). */
  private readonly rows: Map<string, TaskResult>[];
  private readonly reused: Set<string>[];
  private readonly started: Set<string>[];
  private readonly scopes: CancellationScope[];
  private readonly runDirs: string[];
  private worktrees: string[] = [];
  private stopped = false;
  /** The last decision, in words (the Web UI's details). */
  private decided = '';
  private readonly alpha: number;
  private readonly startedAt = workflowInfo().startTime.toISOString();

  constructor(private readonly input: RaceInput) {
    // Only a race given earlier evaluations' weights draws by them (races without weights never reach the marker).
    const plan = racePlan(input.tasks, input.seed, input.taskWeights && patched('race-weighted-order') ? input.taskWeights : null);
    this.order = plan.order;
    this.k = input.candidates.length;
    this.alpha = 1 - input.confidence;
    // Races begun before the hedged-capital sequence keep deciding with PrPl-EB, as their history did.
    const cs: CsKind = patched('race-hedged-capital') ? 'hedged' : 'eb';
    const horizon = cs === 'hedged' ? raceHorizon(input.tasks.length) : undefined;
    const sampling = plan.draws ? { sampling: { draws: plan.draws } } : {};
    this.stats = new PairedRace({ alpha: this.alpha, nCandidates: this.k, margin: input.margin, cs, horizon, ...sampling });
    this.ownCs = input.candidates.map(() => this.ownSequence(plan, cs, horizon));
    this.rows = input.candidates.map(() => new Map());
    this.reused = input.candidates.map(() => new Set());
    this.started = input.candidates.map(() => new Set());
    this.scopes = input.candidates.map(() => new CancellationScope({ cancellable: true }));
    this.runDirs = input.candidates.map((c) => homePaths(input.home).runDir(c.evalId, workflowInfo().runId));
    input.stored.forEach((rows, c) => {
      for (const row of rows) {
        if (!input.tasks.includes(row.task)) continue;
        this.rows[c]!.set(row.task, row as unknown as TaskResult);
        this.reused[c]!.add(row.task);
      }
    });
    const nAttempts = input.settings.harbor.n_attempts;
    this.state = {
      raceId: input.raceId,
      phase: 'preparing',
      order: this.order,
      seed: input.seed,
      confidence: input.confidence,
      margin: input.margin,
      ...this.samplingRecord(plan),
      decidedUpTo: 0,
      running: 0,
      candidates: input.candidates.map(startingCandidateState),
      decisions: [],
      stopReason: null,
      winner: null,
      verdict: null,
      spent: { trialRuns: 0, costUsd: 0, taskRuns: 0 },
      fullEvaluation: { taskRuns: this.order.length * this.k, trialRuns: this.order.length * this.k * nAttempts, costUsd: null },
    };
  }

  /** A candidate's own mean sequence: uniform as always, or reweighted over all tasks when the order is weighted. */
  private ownSequence(plan: RacePlan, cs: CsKind, horizon: number | undefined): SequentialCs {
    const opts = { alpha: this.alpha / this.k, horizon };
    return plan.draws ? weightedMeanCs(plan.draws, opts) : makeCs(cs, opts);
  }

  /** The record of a weighted draw (nothing for the uniform shuffle, whose seed says it all). */
  private samplingRecord(plan: RacePlan): Pick<RaceState, 'sampling'> {
    if (!plan.draws) return {};
    const earlierEvaluations = this.input.earlierEvaluations ?? 0;
    return { sampling: { kind: 'history-weighted', earlierEvaluations, relativeProbability: plan.draws.map((d) => d.rel) } };
  }

  private get batch(): number {
    const live = Math.max(1, this.stats.alive().length);
    return this.input.batchSize ?? Math.max(1, Math.floor(this.input.settings.concurrency / live));
  }

  async run(): Promise<RaceResult> {
    const prepared = await Promise.all(
      this.input.candidates.map((c) =>
        prepareCandidate({ agentRepo: this.input.agentRepo, candidate: c.candidate, home: this.input.home }),
      ),
    );
    this.worktrees = prepared.map((p) => p.worktree);
    this.state.phase = 'racing';
    this.decideWhilePossible();
    const lanes = Array.from({ length: this.input.settings.concurrency }, () => this.lane());
    await Promise.all(lanes);
    if (!this.state.stopReason) this.state.stopReason = this.stats.t >= this.order.length ? 'tasks-exhausted' : 'spend-cap';
    this.finishVerdict();
    this.state.phase = 'finalizing';
    const results = await Promise.all(this.input.candidates.map((_, c) => this.finalizeCandidate(c)));
    this.state.phase = 'done';
    return { ...this.state, results };
  }

  /** The next (candidate, task) to run: task-major in the shared order, live candidates only, one batch ahead. */
  private next(): { c: number; i: number } | null {
    if (this.stopped) return null;
    const limit = Math.min(this.order.length, this.stats.t + 2 * this.batch);
    for (let i = this.stats.t; i < limit; i++) {
      for (const c of this.stats.alive()) {
        const task = this.order[i]!;
        if (!this.rows[c]!.has(task) && !this.started[c]!.has(task)) return { c, i };
      }
    }
    return null;
  }

  private async lane(): Promise<void> {
    for (;;) {
      await condition(() => this.stopped || this.next() !== null || this.allDone());
      const item = this.next();
      if (!item) return;
      const task = this.order[item.i]!;
      this.started[item.c]!.add(task);
      this.state.running++;
      try {
        const row = await this.runOne(item.c, task);
        this.rows[item.c]!.set(task, row);
        this.count(item.c, row);
      } finally {
        this.state.running--;
      }
      this.decideWhilePossible();
      this.showProgress();
    }
  }

  /** Every live candidate's rows cover the whole order (nothing more to start or decide). */
  private allDone(): boolean {
    return this.stats.t >= this.order.length;
  }

  /** Candidate c's row for a task: run by its activity, or not run when the race stopped the candidate. */
  private async runOne(c: number, task: string): Promise<TaskResult> {
    const { input } = this;
    const cand = input.candidates[c]!;
    const jobDir = taskJobDir(this.runDirs[c]!, task);
    const { runTask } = taskActivities(input.settings);
    const candidate = { agentRepo: input.agentRepo, commit: cand.candidate, home: input.home };
    const args = { runDir: this.runDirs[c]!, task, worktree: this.worktrees[c]!, settings: input.settings, candidate };
    try {
      return await this.scopes[c]!.run(() =>
        runTask.executeWithOptions({ summary: `${cand.candidateRef}: task ${task}`.slice(0, 200) }, [args]),
      );
    } catch (err) {
      if (stoppedAlone(err, this.scopes[c]!.consideredCancelled))
        return notRunRow(task, `stopped: ${this.state.candidates[c]!.why ?? 'eliminated from the race'}`, jobDir);
      return failedTaskRow(err, task, input.settings.taskAttempts, jobDir);
    }
  }

  private count(c: number, row: TaskResult): void {
    if (row.status === 'not_run') return;
    const s = this.state.candidates[c]!;
    s.trialRuns += row.nTrials;
    s.costUsd += row.usage?.costUsd ?? 0;
    this.state.spent.trialRuns += row.nTrials;
    this.state.spent.costUsd += row.usage?.costUsd ?? 0;
    this.state.spent.taskRuns++;
    const cap = this.input.maxCostUsd;
    if (cap !== undefined && this.state.spent.costUsd >= cap && !this.stopped) {
      this.stopped = true;
      this.state.stopReason = 'spend-cap';
    }
  }

  /** Decides each batch whose tasks every live candidate has a row for, in the shared order. */
  private decideWhilePossible(): void {
    while (!this.state.stopReason || this.state.stopReason === 'spend-cap') {
      const from = this.stats.t;
      const to = Math.min(this.order.length, from + this.batch);
      if (from >= to) return;
      const alive = this.stats.alive();
      if (!alive.every((c) => this.order.slice(from, to).every((task) => this.rows[c]!.has(task)))) return;
      for (let i = from; i < to; i++) {
        const task = this.order[i]!;
        const scores = this.input.candidates.map((_, c) => (this.stats.live[c] ? countedScore(this.rows[c]!.get(task)) : null));
        this.stats.observe(scores);
        alive.forEach((c) => this.ownCs[c]!.push(scores[c]!));
      }
      this.record();
      if (this.state.stopReason && this.state.stopReason !== 'spend-cap') return;
    }
  }

  private record(): void {
    const d = this.stats.decide();
    const refs = this.input.candidates.map((c) => c.candidateRef);
    this.state.decidedUpTo = d.t;
    this.state.candidates.forEach((s, c) => {
      if (s.status !== 'racing') return;
      const own = this.ownCs[c]!.current();
      s.tasksRun = d.t;
      s.reused = this.order.slice(0, d.t).filter((t) => this.reused[c]!.has(t)).length;
      s.mean = own.mean;
      s.meanCs = [own.lower, own.upper];
      const b = d.bounds[c];
      s.vsLeader = b ? { meanDiff: b.meanDiff, lower: b.lower, upper: b.upper } : null;
      if (b) s.path.push({ t: d.t, meanDiff: b.meanDiff, lower: b.lower, upper: b.upper });
    });
    for (const c of d.eliminated) {
      const s = this.state.candidates[c]!;
      const b = d.bounds[c]!;
      s.status = 'eliminated';
      s.eliminatedAt = d.t;
      s.why = `after ${d.t} shared task(s): mean(${s.candidateRef} − ${refs[d.leader]}) = ${b.meanDiff.toFixed(3)}, its ${(100 * this.input.confidence).toFixed(0)}% confidence sequence [${b.lower.toFixed(3)}, ${b.upper.toFixed(3)}] is entirely below 0`;
      if (this.input.onEliminated === 'stop') this.scopes[c]!.cancel();
    }
    this.state.decisions.push({
      t: d.t,
      leader: refs[d.leader]!,
      eliminated: d.eliminated.map((c) => ({ candidateRef: refs[c]!, meanDiff: d.bounds[c]!.meanDiff, upper: d.bounds[c]!.upper })),
      stop: d.stop,
    });
    if (d.eliminated.length)
      upsertMemo({ eliminated: Object.fromEntries(this.state.candidates.filter((s) => s.why).map((s) => [s.candidateRef, s.why])) });
    if (d.stop) {
      this.state.stopReason = d.stop;
      this.stopped = true;
    }
    this.decided = `after ${d.t} of ${this.order.length} task(s): leader ${refs[d.leader]}, ${this.stats.alive().length} of ${this.k} racing`;
    setCurrentDetails(this.decided);
  }

  /**
   * The race's page in the Web UI: task runs done of all, running, and each candidate's rows so far, with the last
   * decision (a query-served field, not a command: replay-safe).
   */
  private showProgress(): void {
    const perCandidate = this.input.candidates.map((cand, c) => {
      const rows = [...this.rows[c]!.values()].filter((r) => r.status !== 'not_run');
      const errors = rows.filter((r) => r.status !== 'scored').length;
      const mean = rows.length ? (rows.reduce((sum, r) => sum + countedScore(r), 0) / rows.length).toFixed(3) : '-';
      return `${cand.candidateRef} ${rows.length}/${this.order.length} done, ${errors} error(s), mean ${mean}`;
    });
    const runs = `**${this.state.spent.taskRuns} task runs done**, ${this.state.running} running`;
    setCurrentDetails([runs, ...perCandidate, ...(this.decided ? [this.decided] : [])].join(' · '));
  }

  /** The winner (the leader over the shared tasks decided) and how sure, in words. */
  private finishVerdict(): void {
    const alive = this.stats.alive();
    const means = alive.map((c) => this.state.candidates[c]!.mean);
    const leader = alive[means.indexOf(Math.max(...means))]!;
    const s = this.state;
    const leaderState = s.candidates[leader]!;
    s.winner = leaderState.candidateRef;
    for (const c of alive) s.candidates[c]!.status = c === leader ? 'winner' : 'finished';
    const conf = `${(100 * this.input.confidence).toFixed(0)}%`;
    const others = alive.filter((c) => c !== leader);
    if (s.stopReason === 'one-left')
      s.verdict = `${s.winner} wins: every other candidate was eliminated at ${conf} confidence (union bound over the ${this.k} candidates)`;
    else if (s.stopReason === 'within-margin')
      s.verdict = `${s.winner} leads; at ${conf} confidence none of ${others.map((c) => s.candidates[c]!.candidateRef).join(', ')} is ${this.input.margin} or more better`;
    else
      s.verdict = `${s.winner} leads after ${s.decidedUpTo} task(s) (${s.stopReason}); not separated at ${conf} from ${others.map((c) => `${s.candidates[c]!.candidateRef} (${s.candidates[c]!.vsLeader?.meanDiff.toFixed(3) ?? '?'}, CS [${s.candidates[c]!.vsLeader?.lower.toFixed(3) ?? '?'}, ${s.candidates[c]!.vsLeader?.upper.toFixed(3) ?? '?'}])`).join(', ')}`;
    const perTask = s.spent.taskRuns ? s.spent.costUsd / s.spent.taskRuns : 0;
    s.fullEvaluation.costUsd = s.spent.costUsd > 0 ? perTask * s.fullEvaluation.taskRuns : null;
  }

  /** The candidate's rows as an evaluation of its own (partial unless it ran every task). */
  private async finalizeCandidate(c: number): Promise<RaceResult['results'][number]> {
    const result = await executeChild(raceEntry, { workflowId: this.input.candidates[c]!.evalId, args: [this.entryInput(c)] });
    const { evalId, candidateRef, status, score, nTasks, nRun, resultFile } = result;
    return { evalId, candidateRef, status, score, nTasks, ...(nRun !== undefined ? { nRun } : {}), resultFile };
  }

  /** What the candidate's race entry finalizes: its rows, what it spent, and why the tasks it did not start were not. */
  private entryInput(c: number): FinalizeInput {
    const { input } = this;
    const cand = input.candidates[c]!;
    const s = this.state.candidates[c]!;
    const rows = [...this.rows[c]!.values()];
    const ran = new Set(rows.filter((r) => r.status !== 'not_run').map((r) => r.task));
    const notStarted = this.order.filter((t) => !this.rows[c]!.has(t));
    s.tasksRun = ran.size;
    const why = s.why ? `raced: eliminated ${s.why}` : `raced: the race stopped (${this.state.stopReason}) after ${ran.size} task(s)`;
    return {
      evalId: cand.evalId,
      candidate: cand.candidate,
      candidateRef: cand.candidateRef,
      home: input.home,
      runDir: this.runDirs[c]!,
      nChunks: 0,
      configDigest: input.configDigest,
      // An (empty) spend cap makes finalize report the rows that ran (nRun) and the reason the rest did not.
      settings: { ...input.settings, spendCap: input.settings.spendCap ?? {} },
      startedAt: this.startedAt,
      tasks: rows,
      spend: { spent: { costUsd: s.costUsd, tokens: 0, unmetered: 0 }, reached: notStarted.length ? why : null, notStarted },
    };
  }
}
