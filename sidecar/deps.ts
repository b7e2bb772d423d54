/** What the sidecar's HTTP server is built from (sidecar/server.ts), shared with the parts it hands them to. */
import type { ServeConfig } from '../model/serve-config';
import type { Engine } from './engine';
import type { Ledger } from './ledger';
import type { CandidateRegistry } from './registry';

export interface SidecarDeps {
  cfg: ServeConfig;
  engine: Engine;
  ledger: Ledger;
  registry: CandidateRegistry;
  token: string;
  log: (line: string) => void;
  /** The gateway's usage and limits per scope, when the task has one (numbers only). */
  gatewayStatus?: () => unknown;
}
