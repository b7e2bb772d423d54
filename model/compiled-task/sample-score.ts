/** One sample's score, as Mode A's activity writes it and the sidecar routes it to the agent (by tier). */
import type { ScopeUsage } from '../gateway/policy';
import { NO_INFERENCE_OUTPUT } from '../evaluation/task-result';

export interface SampleScore {
  id: number;
  name: string;
  score: number | null;
  error: string | null;
  output?: unknown;
  /** Mode A's command harness: the metrics of its report (the score is the objective's metric of them). */
  metrics?: Record<string, number>;
  /** Mode B: the task's trials, and those that ended without rewards (dead: infrastructure or a crash). */
  n_trials?: number;
  n_dead_trials?: number;
  /** Mode B: live trials that ran with 0 input and 0 output tokens (model calls refused): not the candidate's score. */
  n_starved_trials?: number;
  /** Of the dead, those with a reward Harbor's error policy marks not valid (a model-provider failure, a spent budget). */
  n_invalid_trials?: number;
  /** What the task's model calls cost through the gateway (agent evaluations of a task with a gateway). */
  model_usage?: ScopeUsage;
  /**
   * Mode B, a viewable split with `feedback.transcripts`, a case that failed: the tail of the evaluated agent's
   * transcript, secrets redacted, at most `feedback.max_bytes` bytes (vero's case `feedback`).
   */
  feedback?: string;
  /** Mode B, a viewable split with `feedback.attempt_detail`: each trial's reward and exception. */
  attempts?: TrialDetail[];
}

/** One trial of a case, as the optimizer may see it: its primary reward (null: none) and its exception type. */
export interface TrialDetail {
  trial: string;
  reward: number | null;
  exception: string | null;
}

/** The start of a Mode A harness row's error when the candidate failed (its report says so, or it ran out of time). */
export const CANDIDATE_FAILED = 'the candidate failed';

/** A Mode A row's error that is the candidate's own failure (scored as the failure value), not the infrastructure's. */
export const isCandidateFailure = (error: string | null | undefined): boolean =>
  (error ?? '').startsWith(NO_INFERENCE_OUTPUT) || (error ?? '').startsWith(CANDIDATE_FAILED);
