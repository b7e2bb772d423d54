/**
 * Attempt health: how many of an evaluation's attempts (Harbor trials) measured nothing of the candidate. A
 * *starved* attempt ran with 0 input and 0 output tokens (its model calls were refused, e.g. a spent gateway
 * budget): its reward is usually an honest-looking 0. A *dead* one ended without a reward (infrastructure).
 * *Unmeasured* is either. A mean over every attempt is then deflated by about 1 / (1 - unmeasured rate), while
 * the error rate may read 0. Pure.
 */

/** At or above this unmeasured rate, an evaluation carries a warning with its deflation factor. */
const UNMEASURED_WARNING_RATE = 0.1;

/** One task's attempts: trials run, trials without a reward, and the tokens of all its trials (null: not reported). */
export interface TaskAttempts {
  trials: number;
  dead: number;
  inputTokens: number | null;
  outputTokens: number | null;
}

export interface AttemptHealth {
  n_attempts: number;
  n_starved: number;
  n_dead: number;
  starved_attempt_rate: number;
  dead_infra_attempt_rate: number;
  unmeasured_attempt_rate: number;
  /** How much the mean over every attempt may be deflated (1 / (1 - unmeasured rate)); null when nothing was measured. */
  deflation_factor: number | null;
  warning?: string;
}

/**
 * Token counts are a task's total, so a task's live attempts count as starved when together they used 0 input and
 * 0 output tokens (a lower bound when some of its attempts had tokens and others none); unreported tokens are
 * never read as starvation.
 */
export function starvedAttempts(t: TaskAttempts): number {
  return t.inputTokens === 0 && t.outputTokens === 0 ? Math.max(0, t.trials - t.dead) : 0;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

export function attemptHealth(tasks: TaskAttempts[], warnAt = UNMEASURED_WARNING_RATE): AttemptHealth {
  const n = tasks.reduce((a, t) => a + t.trials, 0);
  const starved = tasks.reduce((a, t) => a + starvedAttempts(t), 0);
  const dead = tasks.reduce((a, t) => a + t.dead, 0);
  const rate = (k: number) => (n ? round(k / n) : 0);
  const lost = starved + dead;
  const deflation = n === 0 || lost >= n ? null : round(n / (n - lost));
  const health: AttemptHealth = {
    n_attempts: n,
    n_starved: starved,
    n_dead: dead,
    starved_attempt_rate: rate(starved),
    dead_infra_attempt_rate: rate(dead),
    unmeasured_attempt_rate: rate(lost),
    deflation_factor: deflation,
  };
  if (n && lost / n >= warnAt)
    health.warning = `${lost} of ${n} attempt(s) measured nothing (${starved} starved: 0 input and 0 output tokens; ${dead} dead: no reward); the mean is deflated ${deflation === null ? 'entirely: it is not a score' : `by about ×${deflation}`}`;
  return health;
}
