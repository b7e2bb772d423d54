/**
 * The arithmetic of an evaluation's lane pool (workflows/lane-grants.ts runs the protocol). A lane is the right to
 * run one task at a time; the parent holds the lanes no chunk holds (`freed`), and after `concurrency` was lowered
 * it is owed the lanes still held beyond it (`owed`). Invariant: lanes held by chunks + freed − owed = concurrency.
 * Pure: each function returns the new counts.
 */
export interface LaneCounts {
  concurrency: number;
  /** Lanes in the parent's hands, not yet granted. */
  freed: number;
  /** Lanes to take out of circulation as they come back, after concurrency was lowered. */
  owed: number;
}

/** Lanes coming back to the parent pay what is owed first; the rest can be granted again. */
export function lanesTakenBack(c: LaneCounts, lanes: number): LaneCounts {
  const paid = Math.min(c.owed, lanes);
  return { concurrency: c.concurrency, freed: c.freed + lanes - paid, owed: c.owed - paid };
}

/**
 * `concurrency` from now on: raising forgives what is owed, then adds freed lanes; lowering removes idle (freed)
 * lanes first and owes the rest (running tasks finish; the lanes are taken out as they come back).
 */
export function concurrencyChanged(c: LaneCounts, concurrency: number): LaneCounts {
  const delta = concurrency - c.concurrency;
  if (delta >= 0) {
    const forgiven = Math.min(c.owed, delta);
    return { concurrency, freed: c.freed + delta - forgiven, owed: c.owed - forgiven };
  }
  const idle = Math.min(c.freed, -delta);
  return { concurrency, freed: c.freed - idle, owed: c.owed + (-delta - idle) };
}

/** All the freed lanes, granted at once: the counts after, and how many. */
export function grantAll(c: LaneCounts): { counts: LaneCounts; lanes: number } {
  return { counts: { ...c, freed: 0 }, lanes: c.freed };
}
