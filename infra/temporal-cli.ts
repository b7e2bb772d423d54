/** Locates the Temporal CLI through scripts/ensure-temporal (TEMPORAL_CLI_PATH, PATH, or a pinned install). */
import { ensureTemporal } from './foreground';
import { InfrastructureError } from '../model/errors';

export function findTemporalCli(): string {
  try {
    return ensureTemporal();
  } catch {
    throw new InfrastructureError('no Temporal CLI available (see the messages above); set TEMPORAL_CLI_PATH to a `temporal` binary');
  }
}
