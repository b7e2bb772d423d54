/**
 * Choosing the graded candidate and scoring it on the target splits, on the trusted side. "No candidate" is
 * the optimizer's failure: the rewards are the floor (each target's failure value as a reward: 0.0 by default
 * when maximising) with the reason stated. A minimised objective ranks the lowest score first and negates
 * scores into rewards (model/compiled-task/objective.ts). A trusted
 * evaluation that fails for infrastructure reasons is not: it runs again up to its runs (a target's
 * `max_attempts`, `rescore_attempts`), then finalize fails (503, nothing recorded) and the task's verifier writes
 * no reward file, so the broken run never looks like a bad candidate. Runs are numbered within one call: a
 * second call attaches to the same runs (their workflows are kept) and meets the same results.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ServeConfig } from '../model/compiled-task/serve-config';
import { sidecarKeyEnvs } from '../model/compiled-task/sidecar-keys';
import { bestFirst, better, rewardOf } from '../model/compiled-task/objective';
import type { Engine } from './engine';
import { raceShortlist, type RacedEntry, type RaceSummary } from './finalize-race';
import { unscorable } from './errors';
import { protectedChanges } from './protected-paths';
import type { CandidateRegistry, EvalRecord } from './registry';

export interface FinalizeResult {
  rewards: Record<string, number>;
  commit: string | null;
  reason: string;
  /** auto_best's shortlist: each commit's recorded and trusted selection score (raced: with its tasks and interval). */
  shortlist?: (ShortlistEntry | RacedEntry)[];
  /** The metric that ranked candidates and the constraints they must satisfy (vero's objective). */
  objective?: { metric: string; direction: string; constraints: string[] };
  /** Per target (its reward key): the constraints the graded candidate broke there (its reward is the failure value). */
  violations?: Record<string, string[]>;
  /** auto_best_race: how the shortlist's race ended, how sure, and its trials against scoring every task. */
  race?: RaceSummary;
  /** Candidates left out because they change read_only_paths, with the paths. */
  refused?: { commit: string; changes: string[] }[];
  /** Every evaluation the sidecar recorded (the optimizer's and the trusted ones), for the verifier's log. */
  candidates?: EvalRecord[];
  /** This result was recorded by an earlier finalize call (nothing was evaluated again). */
  replayed?: boolean;
  /**
   * The seed agent's reward per target, next to `rewards`: pinned (`baseline_reward`), or scored on the trusted
   * side with `score_baseline` (null with the error when that scoring failed: it never fails finalize).
   */
  baselines?: Record<string, BaselineReward>;
  /** Agent evaluations that were still running when finalize began: finished during the drain, or cancelled. */
  drain?: { in_flight: number; finished: number; cancelled: number; waited_sec: number };
  /**
   * Present when the build turned harness isolation off (harness_user: null): this reward was produced by candidate
   * code that could read the sidecar's secrets and held-out state, as the build declared.
   */
  unisolated?: { harness_user: null; task_services_use_upstream: boolean; exposure: string };
}

/** What a reward produced without harness isolation carries (null when the harness was isolated). */
export function isolationRecord(cfg: ServeConfig): FinalizeResult['unisolated'] | null {
  if (cfg.harness_user !== null) return null;
  return {
    harness_user: null,
    task_services_use_upstream: cfg.task_services_use_upstream ?? false,
    exposure: `candidate code ran as the sidecar's own user: it could read the sidecar's secrets (${[...new Set([...cfg.secrets, ...sidecarKeyEnvs(cfg)])].join(', ') || 'none declared'}) and held-out state${cfg.task_services_use_upstream ? '; task services had the raw upstream key' : ''}`,
  };
}

/** A shortlisted commit's recorded and trusted selection score, and the constraints its re-score broke. */
type ShortlistEntry = { commit: string; recorded: number; rescored: number; violations?: string[] };

interface BaselineReward {
  reward: number | null;
  source: 'pinned' | 'scored';
  error?: string;
}

const changesOf = (cfg: ServeConfig, commit: string) => protectedChanges(cfg.repo_path, cfg.base_commit, commit, cfg.read_only_paths);

/** How a trusted evaluation scores: a target's fields (none for a re-score of the selection split). */
type TrustedScoring = Pick<
  ServeConfig['targets'][number],
  'sample_ids' | 'n_attempts' | 'failure_value' | 'metric' | 'aggregate' | 'model'
>;

/** A trusted evaluation's mean, and the objective's constraints it broke (none: absent). */
type Scored = { score: number; violations?: string[] };

/**
 * A trusted evaluation's mean, run up to `runs` times (each a run of its own) while it cannot score for
 * infrastructure reasons; after the last, its unscorable error (503), saying how many runs it had.
 */
async function trustedScore(engine: Engine, commit: string, split: string, t: TrustedScoring = {}, runs = 1): Promise<Scored> {
  for (let run = 1; ; run++) {
    try {
      return await trustedRun(engine, commit, split, t, run);
    } catch (e) {
      if (run >= runs) throw runs > 1 ? unscorable(`${(e as Error).message} (after ${runs} runs)`) : e;
    }
  }
}

/** One run of a trusted evaluation: its mean, or unscorable when it could not score for infrastructure reasons. */
async function trustedRun(engine: Engine, commit: string, split: string, t: TrustedScoring, run: number): Promise<Scored> {
  const { ids } = engine.select(split, t.sample_ids ? { sample_ids: t.sample_ids } : {});
  let out;
  try {
    const { n_attempts: nAttempts, failure_value: failureValue, metric, aggregate, model } = t;
    out = await engine.evaluate(commit, split, ids, 'trusted', { run, nAttempts, failureValue, metric, aggregate, model });
  } catch (e) {
    throw unscorable(`the trusted evaluation of ${commit.slice(0, 12)} on "${split}" failed: ${(e as Error).message}`);
  }
  if (out.invalid) throw unscorable(`the trusted evaluation of ${commit.slice(0, 12)} on "${split}" is not a score: ${out.invalid}`);
  // A starved attempt (0 input and 0 output tokens: its model calls were refused) says nothing of the candidate:
  // its 0 would be a low reward that is not the candidate's. Invalid, not low: fail (503), record nothing.
  if (out.health.n_starved > 0)
    throw unscorable(
      `the trusted evaluation of ${commit.slice(0, 12)} on "${split}" has ${out.health.n_starved} of ${out.health.n_attempts} attempt(s) starved (0 input and 0 output tokens): not a score`,
    );
  if (out.nInfraErrors > 0) {
    const first = out.samples.find((s) => s.score === null);
    throw unscorable(
      `the trusted evaluation of ${commit.slice(0, 12)} on "${split}" has ${out.nInfraErrors} of ${out.samples.length} sample(s) unscored for infrastructure reasons (first: ${first?.name}: ${first?.error})`,
    );
  }
  return { score: out.meanScore, ...(out.violations ? { violations: out.violations } : {}) };
}

/** auto_best's re-score of a commit on all of the selection split (up to `rescore_attempts` runs). */
const rescore = (cfg: ServeConfig, engine: Engine, commit: string) =>
  trustedScore(engine, commit, cfg.selection_split, {}, cfg.rescore_attempts ?? 1);

/**
 * A target's reward for a commit: its trusted score (up to its `max_attempts` runs), negated when the objective is
 * minimised; the target's failure value as a reward when the score breaks a constraint of the objective.
 */
async function targetScore(cfg: ServeConfig, engine: Engine, commit: string, t: ServeConfig['targets'][number]) {
  const { score, violations } = await trustedScore(engine, commit, t.split, t, t.max_attempts ?? 1);
  if (violations) return { reward: floorReward(cfg, t), violations };
  return { reward: rewardOf(score, cfg.objective.direction) };
}

/** A target's reward with no candidate: its failure value as a reward (0 when maximising by default). */
const floorReward = (cfg: ServeConfig, t: ServeConfig['targets'][number]) =>
  rewardOf(t.failure_value ?? cfg.objective.failure_value ?? 0, cfg.objective.direction);

/** The graded commit (null: none), why, and how auto_best came to it. */
type Choice = Pick<FinalizeResult, 'commit' | 'reason' | 'shortlist' | 'race' | 'refused'>;

/** The submitted candidate; null when nothing was submitted. */
async function submittedChoice(cfg: ServeConfig): Promise<Choice | null> {
  const file = path.join(cfg.paths.admin_volume, 'submission.json');
  if (!fs.existsSync(file)) return null;
  const commit = (JSON.parse(fs.readFileSync(file, 'utf8')) as { commit: string }).commit;
  const changes = await changesOf(cfg, commit);
  if (changes.length)
    return {
      commit: null,
      reason: `the submitted candidate ${commit} changes read-only path(s) ${changes.join(', ')}`,
      refused: [{ commit, changes }],
    };
  return { commit, reason: 'submitted candidate' };
}

/**
 * Whether a candidate may be graded: never one that changes read_only_paths (the eval route refuses them; this
 * holds even for records made before the rule, or under another config). Each commit checked once; the refused
 * ones are pushed to `refused`.
 */
function readOnlyCheck(cfg: ServeConfig, refused: NonNullable<FinalizeResult['refused']>): (commit: string) => Promise<boolean> {
  const checked = new Map<string, boolean>();
  return async (commit) => {
    if (!checked.has(commit)) {
      const changes = await changesOf(cfg, commit);
      checked.set(commit, changes.length === 0);
      if (changes.length) refused.push({ commit, changes });
    }
    return checked.get(commit)!;
  };
}

/**
 * The optimizer's evaluations auto_best may choose from: valid, within the constraints, not the base commit, and
 * not early-stopped (its mean is over the cases it ran before the test said it cannot win).
 */
const choosable = (cfg: ServeConfig, r: EvalRecord): boolean =>
  !r.admin && !r.invalid && !r.violations && !r.early_stop?.stopped && r.commit !== cfg.base_commit;

/**
 * auto_best: the recorded scores only shortlist — evaluations of the selection split that covered at least
 * `min_selection_coverage` of it — and every shortlisted commit is re-scored on the full split. With nothing to
 * shortlist, the last evaluated candidate (any split) is graded, and the reason says so; with no candidate at
 * all, none.
 */
async function autoBestChoice(cfg: ServeConfig, engine: Engine, registry: CandidateRegistry): Promise<Choice> {
  const dir = cfg.objective.direction;
  const selectionSize = engine.splitSamples(cfg.selection_split).length;
  const best = new Map<string, { score: number; seq: number }>();
  const refused: NonNullable<FinalizeResult['refused']> = [];
  const allowed = readOnlyCheck(cfg, refused);
  const candidates = registry.list().filter((r) => choosable(cfg, r));
  let undercovered = 0;
  for (const r of candidates) {
    if (r.split !== cfg.selection_split || !(await allowed(r.commit))) continue;
    if (!r.full_split && r.n_samples < cfg.min_selection_coverage * selectionSize) {
      undercovered++;
      continue;
    }
    const prev = best.get(r.commit);
    if (!prev || better(r.mean_score, prev.score, dir)) best.set(r.commit, { score: r.mean_score, seq: prev?.seq ?? r.seq });
  }
  const withRefused = refused.length ? { refused } : {};
  const order = bestFirst(dir);
  const shortlist = [...best.entries()].sort((a, b) => order(a[1].score, b[1].score) || a[1].seq - b[1].seq).slice(0, cfg.auto_best_k);
  if (shortlist.length === 0) {
    const notes = [
      ...(undercovered ? [`${undercovered} evaluation(s) covered less than ${Math.round(cfg.min_selection_coverage * 100)}% of it`] : []),
      ...(refused.length ? [`${refused.length} candidate(s) refused for changing read-only paths`] : []),
    ];
    const why = `no candidate was evaluated on "${cfg.selection_split}" (baseline evaluations do not count${notes.length ? `; ${notes.join('; ')}` : ''})`;
    for (const r of [...candidates].reverse())
      if (await allowed(r.commit)) return { commit: r.commit, reason: `${why}; graded the last evaluated candidate`, ...withRefused };
    return { commit: null, reason: why, ...withRefused };
  }
  const { raced, rescored, winner } = await rescoreShortlist(cfg, engine, shortlist);
  const withRace = raced ? { race: raced.race } : {};
  if (!winner) return { commit: null, reason: EVERY_ONE_BROKE, shortlist: rescored, ...withRefused };
  if (cfg.baseline_floor) {
    const pinned = cfg.baseline_selection_score;
    const base = pinned ?? (await rescore(cfg, engine, cfg.base_commit)).score;
    if (!better(winner.rescored, base, dir))
      return {
        commit: cfg.base_commit,
        reason: `no candidate beat the baseline (${base.toFixed(3)}${pinned !== undefined ? ', pinned' : ''}) on "${cfg.selection_split}"`,
        shortlist: rescored,
        ...withRace,
        ...withRefused,
      };
  }
  return {
    commit: winner.commit,
    reason: raced
      ? `winner of a race of ${rescored.length} shortlisted candidate(s) on "${cfg.selection_split}": ${raced.race.verdict}`
      : `best of ${rescored.length} re-scored candidate(s) on "${cfg.selection_split}"`,
    shortlist: rescored,
    ...withRace,
    ...withRefused,
  };
}

const EVERY_ONE_BROKE = 'every shortlisted candidate broke a constraint of the objective when re-scored';

/**
 * The shortlist re-scored on the trusted side (raced, with auto_best_race) and its winner: the best re-score that
 * breaks no constraint of the objective (ties: the earlier shortlist position); null when every one breaks one.
 */
async function rescoreShortlist(cfg: ServeConfig, engine: Engine, shortlist: [string, { score: number }][]) {
  const raced = cfg.auto_best_race && shortlist.length >= 2 ? await raceShortlist(cfg, engine, shortlist) : null;
  if (raced) return { raced, rescored: raced.entries, winner: raced.entries.find((r) => r.commit === raced.winner)! };
  const rescored: ShortlistEntry[] = [];
  for (const [commit, rec] of shortlist) {
    const { score, violations } = await rescore(cfg, engine, commit);
    rescored.push({ commit, recorded: rec.score, rescored: score, ...(violations ? { violations } : {}) });
  }
  let winner: ShortlistEntry | null = null;
  for (const r of rescored) if (!r.violations && (!winner || better(r.rescored, winner.rescored, cfg.objective.direction))) winner = r;
  return { raced: null, rescored, winner };
}

/** submit mode: the submission, else what auto_best would choose, else the floor; the reason says which. */
export async function chooseCommit(cfg: ServeConfig, engine: Engine, registry: CandidateRegistry): Promise<Choice> {
  if (cfg.reward_mode === 'submit') {
    const submitted = await submittedChoice(cfg);
    if (submitted) return submitted;
    const auto = await autoBestChoice(cfg, engine, registry);
    return { ...auto, reason: `no candidate was submitted; ${auto.reason}` };
  }
  return autoBestChoice(cfg, engine, registry);
}

/**
 * The seed's reward on each target, where it is known or asked for: pinned values as they are; with
 * `score_baseline`, the others scored on the trusted side (the chosen commit's rewards when it is the seed).
 */
async function baselineRewards(
  cfg: ServeConfig,
  engine: Engine,
  chosen: string | null,
  rewards: Record<string, number>,
): Promise<Record<string, BaselineReward>> {
  const out: Record<string, BaselineReward> = {};
  for (const t of cfg.targets) {
    if (t.baseline_reward !== undefined) out[t.reward_key] = { reward: t.baseline_reward, source: 'pinned' };
    else if (chosen === cfg.base_commit) out[t.reward_key] = { reward: rewards[t.reward_key]!, source: 'scored' };
    else if (cfg.score_baseline) {
      try {
        out[t.reward_key] = { reward: (await targetScore(cfg, engine, cfg.base_commit, t)).reward, source: 'scored' };
      } catch (e) {
        out[t.reward_key] = { reward: null, source: 'scored', error: (e as Error).message };
      }
    }
  }
  return out;
}

/** What finalize ranked by: the objective's metric and direction, its constraints as `metric operator value`. */
const objectiveRecord = (cfg: ServeConfig): NonNullable<FinalizeResult['objective']> => ({
  metric: cfg.objective.metric ?? 'score',
  direction: cfg.objective.direction,
  constraints: (cfg.objective.constraints ?? []).map((c) => `${c.metric} ${c.operator} ${c.value}`),
});

export async function finalize(cfg: ServeConfig, engine: Engine, registry: CandidateRegistry): Promise<FinalizeResult> {
  const choice = await chooseCommit(cfg, engine, registry);
  const rewards: Record<string, number> = {};
  const unisolated = isolationRecord(cfg);
  const withBaselines = async (r: FinalizeResult): Promise<FinalizeResult> => {
    const baselines = await baselineRewards(cfg, engine, r.commit, r.rewards);
    const more = { objective: objectiveRecord(cfg), ...(unisolated ? { unisolated } : {}) };
    return { ...r, ...(Object.keys(baselines).length ? { baselines } : {}), ...more };
  };
  if (!choice.commit) {
    for (const t of cfg.targets) rewards[t.reward_key] = floorReward(cfg, t);
    return withBaselines({
      rewards,
      commit: null,
      reason: `${choice.reason}: floor rewards`,
      ...(choice.refused ? { refused: choice.refused } : {}),
    });
  }
  // The seed graded by the floor takes its pinned rewards as they are: pinned from repeated runs, they are
  // a better estimate than one more pass.
  const pinned = choice.commit === cfg.base_commit;
  const violations: Record<string, string[]> = {};
  for (const t of cfg.targets) {
    const scored =
      pinned && t.baseline_reward !== undefined ? { reward: t.baseline_reward } : await targetScore(cfg, engine, choice.commit, t);
    rewards[t.reward_key] = scored.reward;
    if ('violations' in scored && scored.violations) violations[t.reward_key] = scored.violations;
  }
  return withBaselines({
    rewards,
    ...(Object.keys(violations).length ? { violations } : {}),
    commit: choice.commit,
    reason: choice.reason,
    ...(choice.shortlist ? { shortlist: choice.shortlist } : {}),
    ...(choice.race ? { race: choice.race } : {}),
    ...(choice.refused ? { refused: choice.refused } : {}),
  });
}
