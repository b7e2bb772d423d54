/** What the gateway's request handlers share (server.ts builds them; forward.ts uses them). */
import type { Dispatcher } from 'undici';
import type { GatewaySpec, Provider } from '../../model/gateway/policy';
import type { RequestAttribution } from './attribution';
import type { Meter } from './meter';
import type { Redactor } from './redact';
import type { RequestLog } from './request-log';
import type { TokenStore } from './tokens';

export interface GatewayDeps {
  spec: GatewaySpec;
  /** Upstream keys by provider, from the sidecar's environment. */
  keys: Partial<Record<Provider, string>>;
  tokens: TokenStore;
  meter: Meter;
  requestLog: RequestLog;
  /** With `request_log.attribution`: the task and conversation of each logged request. */
  attribution?: RequestAttribution;
  log: (line: string) => void;
}

/** What the request handlers share: the deps, the upstream timeout and the HTTP clients to reach the upstreams. */
export interface GatewayContext {
  d: GatewayDeps;
  timeoutMs: number;
  /** The direct client for an upstream on this machine, else the proxy-aware one. */
  dispatcherFor: (url: string) => Dispatcher;
  /** Removes the upstream keys from what is relayed or logged. */
  redact: Redactor;
}
