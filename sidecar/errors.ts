import { ExitCode, VeroError } from '../model/errors';
import { FailureType } from '../model/failures';

/** Sidecar errors, each with the HTTP status it maps to. Messages never carry hidden data. */
export class SidecarError extends VeroError {
  readonly exitCode = ExitCode.evaluationFailed;
  readonly failureType = FailureType.SidecarError;
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
export const budgetExceeded = (m: string) => new SidecarError(429, m);
export const notEvaluable = (m: string) => new SidecarError(400, m);
export const badRequest = (m: string) => new SidecarError(400, m);
export const conflict = (m: string) => new SidecarError(409, m);
export const forbidden = (m: string) => new SidecarError(403, m);
