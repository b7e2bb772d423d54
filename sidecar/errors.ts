/** The sidecar's refusals, each with the HTTP status it is answered with (SidecarError: model/errors.ts). */
import { SidecarError } from '../model/errors';

export { SidecarError };
export const budgetExceeded = (m: string) => new SidecarError(429, m);
export const notEvaluable = (m: string) => new SidecarError(400, m);
export const badRequest = (m: string) => new SidecarError(400, m);
export const conflict = (m: string) => new SidecarError(409, m);
export const forbidden = (m: string) => new SidecarError(403, m);
/** A trusted evaluation could not score (infrastructure): finalize fails instead of flooring the reward. */
export const unscorable = (m: string) => new SidecarError(503, m);
