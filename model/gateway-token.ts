/** Gateway token values: random, prefixed with their scope (for whoever reads a log; the prefix grants nothing). */
import { createHash, randomBytes } from 'node:crypto';
import type { GatewayScope } from './gateway-policy';

export const digestOf = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

export const newToken = (scope: GatewayScope): string => `vero-${scope}-${randomBytes(32).toString('base64url')}`;
