/**
 * Where early stop's run records lie under an admin dir or a session taken from one (the layout
 * sidecar/early-stop-store.ts writes): for readers outside the sidecar (`vero view --session`), read-only.
 */
import * as path from 'node:path';

/** The dir of early stop's run records (one JSON file per evaluation) under `adminDir`. */
export const earlyStopRunsDir = (adminDir: string): string => path.join(adminDir, 'early-stop', 'runs');
