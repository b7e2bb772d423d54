/** Gateway token values: random, prefixed with their scope (for whoever reads a log; the prefix grants nothing). */
import { createHash, randomBytes } from 'node:crypto';
import { GATEWAY_SCOPES, type GatewayScope } from './policy';

export const digestOf = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

const TOKEN_BYTES = 32;

export const newToken = (scope: GatewayScope): string => `vero-${scope}-${randomBytes(TOKEN_BYTES).toString('base64url')}`;

/** Any token `newToken` makes, of any scope, wherever it appears in a text (global: for `replace`). */
export const anyTokenPattern = (): RegExp =>
  new RegExp(`vero-(?:${GATEWAY_SCOPES.join('|')})-[A-Za-z0-9_-]{${Math.ceil((TOKEN_BYTES * 4) / 3)}}`, 'g');
