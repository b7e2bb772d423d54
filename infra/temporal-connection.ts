/**
 * Connection settings shared by the worker and the CLI, from the environment, so one image runs against a
 * local dev server, a self-hosted cluster or Temporal Cloud:
 *   VERO_TEMPORAL_ADDRESS, VERO_TEMPORAL_NAMESPACE, VERO_TASK_QUEUE  (also flags / vero.yaml)
 *   VERO_TEMPORAL_API_KEY                                           (Temporal Cloud API key; implies TLS)
 *   VERO_TEMPORAL_TLS=1, VERO_TEMPORAL_TLS_CERT, VERO_TEMPORAL_TLS_KEY, VERO_TEMPORAL_TLS_CA, VERO_TEMPORAL_TLS_SERVER_NAME
 */
import * as fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { ConfigError } from '../model/errors';

export interface ConnectionExtras {
  tls?: TLSConfig | boolean;
  apiKey?: string;
}

function read(env: NodeJS.ProcessEnv, name: string): Buffer {
  const file = env[name]!;
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new ConfigError(`${name}: cannot read ${file} (${(e as NodeJS.ErrnoException).code})`);
  }
}

export function connectionExtrasFromEnv(env: NodeJS.ProcessEnv = process.env): ConnectionExtras {
  const apiKey = env.VERO_TEMPORAL_API_KEY || undefined;
  const wantsTls = ['1', 'true', 'yes'].includes((env.VERO_TEMPORAL_TLS ?? '').toLowerCase()) || !!env.VERO_TEMPORAL_TLS_CERT || !!apiKey;
  if (!wantsTls) return {};
  if (!!env.VERO_TEMPORAL_TLS_CERT !== !!env.VERO_TEMPORAL_TLS_KEY)
    throw new ConfigError('VERO_TEMPORAL_TLS_CERT and VERO_TEMPORAL_TLS_KEY go together (mTLS)');
  const tls: TLSConfig = {
    ...(env.VERO_TEMPORAL_TLS_CERT
      ? { clientCertPair: { crt: read(env, 'VERO_TEMPORAL_TLS_CERT'), key: read(env, 'VERO_TEMPORAL_TLS_KEY') } }
      : {}),
    ...(env.VERO_TEMPORAL_TLS_CA ? { serverRootCACertificate: read(env, 'VERO_TEMPORAL_TLS_CA') } : {}),
    ...(env.VERO_TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: env.VERO_TEMPORAL_TLS_SERVER_NAME } : {}),
  };
  return { tls: Object.keys(tls).length ? tls : true, ...(apiKey ? { apiKey } : {}) };
}
