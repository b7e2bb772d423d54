/**
 * What starting a compiled task with an inference gateway takes (`vero run`): a fresh producer token, whose
 * digest goes to the sidecar through the environment of `harbor run` (the compose file requires it) and whose
 * value goes to the optimizer's agent as `--ae` variables: the SDKs' key and base-URL names, pointing at the
 * gateway. The upstream keys themselves stay in the host environment, for the sidecar only.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { clientEnvFor, PRODUCER_TOKEN_DIGEST_ENV } from '../model/gateway/policy';
import { ServeConfig } from '../model/compiled-task/serve-config';
import { digestOf, newToken } from '../model/gateway/token';

export interface GatewayLaunch {
  /** For the `harbor run` process (compose interpolation): the producer token's digest. */
  env: Record<string, string>;
  /** `--ae NAME=value` for the optimizer's agent. */
  harborArgs: string[];
  /** The variables the agent gets (values included): for `vero run --print`. */
  agentEnv: Record<string, string>;
}

/** The task's serve config, or null when the dir is not a compiled task. */
export function compiledServeConfig(taskDir: string): ServeConfig | null {
  const file = path.join(taskDir, 'environment', 'sidecar', 'serve.json');
  if (!fs.existsSync(file)) return null;
  return ServeConfig.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
}

/** Null when the task has no gateway (nothing to add to `harbor run`). */
export function gatewayLaunch(taskDir: string, token = newToken('producer')): GatewayLaunch | null {
  const gw = compiledServeConfig(taskDir)?.gateway;
  if (!gw) return null;
  const base = `http://eval-sidecar:${gw.port}`;
  const agentEnv = clientEnvFor(gw.upstreams, token, base);
  return {
    env: { [PRODUCER_TOKEN_DIGEST_ENV]: digestOf(token) },
    harborArgs: Object.entries(agentEnv).flatMap(([k, v]) => ['--ae', `${k}=${v}`]),
    agentEnv,
  };
}
