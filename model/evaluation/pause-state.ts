/** A paused evaluation (`vero pause`): since when, and whether the tasks running then were stopped. Pure. */
import { z } from 'zod';

export const PauseState = z.strictObject({
  /** When it was paused (workflow time, ISO 8601 UTC). */
  since: z.string(),
  /** Whether the tasks running at the pause were stopped (to run again, their jobs resumed, on resume). */
  stopRunning: z.boolean(),
});
export type PauseState = z.infer<typeof PauseState>;

/** What `vero pause` and `vero resume` return: the state now, and whether this call changed it. */
export interface PauseChange {
  paused: boolean;
  since: string | null;
  stopRunning: boolean;
  changed: boolean;
}
