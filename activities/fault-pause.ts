/**
 * Fault injection for the durability tests: `VERO_FAULT_PAUSE=<point>:<ms>[,<point>:<ms>]` makes an activity
 * pause (heartbeating) at a named point and drop a marker file `<VERO_FAULT_MARKER_DIR>/<point>`, so a test can
 * SIGKILL the worker exactly there. Points: `collate` (runTask, after harbor exited, before its job dir is
 * read) and `finalize` (finalizeEvaluation, before the result file is written). Unset in production: no effect.
 */
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import { writeFileDurable } from '../infra/atomic-file';

export async function faultPause(point: 'collate' | 'finalize'): Promise<void> {
  const spec = process.env.VERO_FAULT_PAUSE;
  if (!spec) return;
  const entry = spec.split(',').find((e) => e.startsWith(`${point}:`));
  if (!entry) return;
  const ms = Number(entry.slice(point.length + 1));
  const dir = process.env.VERO_FAULT_MARKER_DIR;
  if (dir) writeFileDurable(path.join(dir, point), `${process.pid}\n`, { fsync: false });
  const end = Date.now() + ms;
  while (Date.now() < end) {
    Context.current().heartbeat();
    await new Promise((r) => setTimeout(r, 200));
  }
}
