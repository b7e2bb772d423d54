/**
 * The gateway as a service of the sidecar: its own listener (port `gateway.port`), its own files on the admin
 * volume (tokens by digest, the meter, the request log, the env files that hand a scoped token to a candidate),
 * and the calls the engine makes around each evaluation.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { readEnvFile, writeEnvFile } from '../../infra/env-file';
import { listenOn } from '../../infra/listen';
import { ConfigError } from '../../model/errors';
import {
  clientEnvFor,
  PRODUCER_TOKEN_DIGEST_ENV,
  type GatewayScope,
  type GatewaySpec,
  type Provider,
  type ScopeUsage,
} from '../../model/gateway/policy';
import { RequestAttribution } from './attribution';
import { Meter } from './meter';
import { RequestLog } from './request-log';
import { buildGateway } from './server';
import { TokenStore } from './tokens';

export const FINALIZATION_TOKEN_ID = 'finalization';

export const gatewayPaths = (adminDir: string) => {
  const dir = path.join(adminDir, 'gateway');
  return {
    dir,
    tokens: path.join(dir, 'tokens.json'),
    meter: path.join(dir, 'meter.json'),
    requestLog: path.join(dir, 'requests.jsonl'),
    envDir: path.join(dir, 'env'),
  };
};

export class Gateway {
  private constructor(
    readonly spec: GatewaySpec,
    readonly paths: ReturnType<typeof gatewayPaths>,
    readonly tokens: TokenStore,
    readonly meter: Meter,
    private readonly app: FastifyInstance,
    readonly port: number,
    /** The base URL candidates are given (`…/v1` is added for OpenAI clients). */
    private readonly candidateBase: string,
  ) {}

  /**
   * Opens the gateway's state and starts listening. The upstream keys come from `env` (the sidecar's
   * environment, by the names the spec gives); the producer token's digest from PRODUCER_TOKEN_DIGEST_ENV.
   */
  static async start(
    spec: GatewaySpec,
    adminDir: string,
    env: NodeJS.ProcessEnv,
    log: (line: string) => void,
    listen: { host: string; port?: number },
  ): Promise<Gateway> {
    const keys: Partial<Record<Provider, string>> = {};
    const missing: string[] = [];
    for (const [provider, up] of Object.entries(spec.upstreams) as [Provider, GatewaySpec['upstreams']['openai']][]) {
      if (!up) continue;
      if (env[up.key_env]) keys[provider] = env[up.key_env];
      else missing.push(`gateway.upstreams.${provider}.key_env: ${up.key_env} is not set in the sidecar's environment`);
    }
    if (missing.length) throw new ConfigError(missing.join('\n'));
    const paths = gatewayPaths(adminDir);
    fs.mkdirSync(paths.envDir, { recursive: true, mode: 0o700 });
    const tokens = TokenStore.open(paths.tokens);
    const meter = Meter.open(paths.meter);
    const digest = env[PRODUCER_TOKEN_DIGEST_ENV]?.trim().toLowerCase();
    if (digest && /^[0-9a-f]{64}$/.test(digest)) tokens.register('producer', 'producer', digest);
    else log(`gateway: no producer token (${PRODUCER_TOKEN_DIGEST_ENV} unset): the optimizer has no model access`);
    const requestLog = new RequestLog(paths.requestLog, spec.request_log);
    const attribution = spec.request_log.attribution ? new RequestAttribution() : undefined;
    const app = buildGateway({ spec, keys, tokens, meter, requestLog, log, ...(attribution ? { attribution } : {}) });
    // A port in use is said by name (a ConfigError: the failure table's exit code), and what was opened closed.
    await listenOn(app, listen.host, listen.port ?? spec.port, 'gateway.port').catch(async (e: unknown) => {
      await app.close();
      throw e;
    });
    const port = (app.server.address() as { port: number }).port;
    const base = spec.candidate_base_url ?? `http://127.0.0.1:${port}`;
    const gw = new Gateway(spec, paths, tokens, meter, app, port, base);
    gw.envFileFor(FINALIZATION_TOKEN_ID, 'finalization');
    log(`gateway on ${listen.host}:${port} (${Object.keys(keys).join(', ')}); candidates use ${base}`);
    return gw;
  }

  /**
   * The env file of a token id, minted when missing (or when its token is no longer live): the same
   * evaluation, resumed or re-sent, keeps its token.
   */
  envFileFor(id: string, scope: GatewayScope): string {
    const file = this.envFileOf(id);
    if (fs.existsSync(file)) {
      const token = Object.values(readEnvFile(file))[0];
      if (this.tokens.lookup(token)?.id === id) return file;
    }
    // `{task}` is filled in by the activity that starts the candidate: the gateway meters per task.
    writeEnvFile(file, clientEnvFor(this.spec.upstreams, this.tokens.mint(id, scope), `${this.candidateBase}/task/{task}`));
    return file;
  }

  private envFileOf(id: string): string {
    return path.join(this.paths.envDir, `${id.replace(/[^A-Za-z0-9_.-]/g, '_')}.json`);
  }

  /** Ends an evaluation's token (revoked, its env file removed) and returns what it spent. */
  endEvaluation(id: string): ScopeUsage {
    this.tokens.revoke(id);
    fs.rmSync(this.envFileOf(id), { force: true });
    return this.meter.tokenUsage(id);
  }

  usageOf(id: string): ScopeUsage {
    return this.meter.tokenUsage(id);
  }

  /** A token's usage per task (the tasks its candidates' calls named). */
  taskUsageOf(id: string): Record<string, ScopeUsage> {
    return this.meter.taskUsage(id);
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}
