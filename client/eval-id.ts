/**
 * Which workflow ids the commands that change an evaluation (cancel, pause, resume, retry) accept: only an
 * evaluation's (`eval-<commit>-<digest>`, model/evaluation/identity.ts). A spend pool, a chunk, a race or a build is
 * refused by its name before anything is sent: cancelling a spend pool would lift the cap of the evaluations on it.
 */
import { ConfigError } from '../model/errors';
import { spendPoolWorkflowId } from '../model/evaluation/spend-cap';

/** An evaluation's workflow id: `eval-`, the candidate's commit (hex), `-`, 16 hex digits of its config digest. */
const EVAL_ID = /^eval-[0-9a-f]{7,64}-[0-9a-f]{16}$/;

/** The workflow types an evaluation id may run: the evaluation, or a race's entry for one candidate. */
const EVALUATION_TYPES: readonly string[] = ['evaluateCandidate', 'raceEntry'];

/** What a workflow id that is not an evaluation's names, for the refusal. */
function whatItIs(id: string): string {
  if (id.startsWith(spendPoolWorkflowId(''))) return 'a spend pool (it ends by itself once no evaluation on it runs)';
  if (/\/chunk-\d+(\.\d+)?$/.test(id)) return "a chunk of an evaluation (name the evaluation: the id before '/chunk')";
  if (id.startsWith('race-')) return 'a race (its candidates are evaluations: `vero race` shows their ids)';
  return 'not an evaluation id';
}

/** Refuses (ConfigError, exit 2) an id that is not an evaluation's, naming what it is instead. */
export function requireEvalId(id: string, verb: string): string {
  if (EVAL_ID.test(id)) return id;
  throw new ConfigError(
    `${verb}: "${id.slice(0, 120)}" is ${whatItIs(id)}; ${verb} takes an evaluation id (eval-<commit>-<digest>, as vero list shows)`,
  );
}

/** Refuses a workflow that has an evaluation's id but is of another type (started by something else). */
export function requireEvaluationType(id: string, type: string, verb: string): void {
  if (!EVALUATION_TYPES.includes(type))
    throw new ConfigError(`${verb}: ${id} is a ${type} workflow, not an evaluation; ${verb} takes an evaluation id`);
}
