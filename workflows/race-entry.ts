/**
 * One candidate's part of a race as an evaluation of its own: the rows the race ran (or reused) for it,
 * finalized like any evaluation (result file, samples), so `vero results ID` and `vero compare` read it. Its
 * tasks the race did not run are `not_run` rows, so it is marked partial (and `vero best` does not rank it).
 */
import type { FinalizeInput } from '../model/evaluation/activity-payloads';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import { stepActivities } from './activity-policy';

const { finalizeEvaluation } = stepActivities;

export async function raceEntry(input: FinalizeInput): Promise<CandidateResult> {
  return await finalizeEvaluation.executeWithOptions({ summary: `raced: ${input.candidateRef}`.slice(0, 200) }, [input]);
}
