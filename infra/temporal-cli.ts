/** Locates the Temporal CLI through scripts/ensure-temporal (TEMPORAL_CLI_PATH, PATH, or a pinned install). */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..', __dirname.includes(`${path.sep}dist${path.sep}`) ? '..' : '.');

export function findTemporalCli(): string {
  const script = path.join(PROJECT_ROOT, 'scripts', 'ensure-temporal');
  try {
    return execFileSync(script, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  } catch {
    throw new Error('no Temporal CLI available (see the messages above); set TEMPORAL_CLI_PATH to a `temporal` binary');
  }
}
