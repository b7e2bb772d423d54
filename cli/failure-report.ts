/** How a command that waited for an evaluation says that it failed or was terminated. */
import { ApplicationFailure, TerminatedFailure, WorkflowFailedError } from '@temporalio/client';
import { causeChain, exitCodeForFailure } from '../model/errors';

/** A failed evaluation: its reason on one line, and the exit code of its failure type (2 for a config error). */
export function reportFailure(e: unknown): number {
  if (e instanceof WorkflowFailedError) {
    // Terminated (by a person or a tool): said as such, with the reason given, not as a failure of its own.
    const how = e.cause instanceof TerminatedFailure ? 'evaluation terminated' : 'evaluation failed';
    process.stderr.write(`${how}: ${causeChain(e.cause) || e.message}\n`);
    return exitCodeForFailure(e.cause instanceof ApplicationFailure ? e.cause.type : null);
  }
  throw e;
}
