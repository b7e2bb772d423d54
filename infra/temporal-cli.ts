/** Locates the Temporal CLI through scripts/ensure-temporal (TEMPORAL_CLI_PATH, PATH, or a pinned install). */
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { PROJECT_ROOT } from './package-root';
import { InfrastructureError } from '../model/errors';

export function findTemporalCli(): string {
  const script = path.join(PROJECT_ROOT, 'scripts', 'ensure-temporal');
  try {
    return execFileSync(script, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  } catch {
    throw new InfrastructureError('no Temporal CLI available (see the messages above); set TEMPORAL_CLI_PATH to a `temporal` binary');
  }
}
