/** What the sidecar's request handlers share (server.ts builds the app from it; agent-evaluations, finalize-once use it). */
import type { ServeConfig } from '../model/compiled-task/serve-config';
import type { Engine } from './engine';
import type { FinalizeResult } from './finalize';
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
  /** Told finalize's result once it is recorded (the W&B reporter); must not throw. */
  onFinalized?: (result: FinalizeResult) => void;
}
