/** Errors in the shape each provider's clients parse, with the retry hint their SDKs honour (`x-should-retry`). */
import type { Provider } from '../../model/gateway/policy';

export interface GatewayRefusal {
  status: number;
  type: string;
  message: string;
  /** false: the official SDKs must not retry (a spent budget); true: retry (a full concurrency slot). */
  retry: boolean;
}

export const refusals = {
  unauthenticated: (): GatewayRefusal => ({
    status: 401,
    type: 'authentication_error',
    message: 'a valid gateway token is required (Authorization: Bearer … or x-api-key)',
    retry: false,
  }),
  notFound: (what: string): GatewayRefusal => ({ status: 404, type: 'not_found_error', message: what, retry: false }),
  badRequest: (what: string): GatewayRefusal => ({ status: 400, type: 'invalid_request_error', message: what, retry: false }),
  modelNotAllowed: (model: unknown, allowed: string[]): GatewayRefusal => ({
    status: 403,
    type: 'model_not_allowed',
    message: `model ${JSON.stringify(model)} is not allowed for this token (allowed: ${allowed.join(', ') || 'none'})`,
    retry: false,
  }),
  budget: (limit: string, message: string): GatewayRefusal => ({
    status: 402,
    type: 'budget_exhausted',
    message: `budget exhausted (${limit}): ${message}`,
    retry: false,
  }),
  unbounded: (message: string): GatewayRefusal => ({ status: 400, type: 'input_not_bounded', message, retry: false }),
  meterUnwritable: (): GatewayRefusal => ({
    status: 503,
    type: 'gateway_error',
    message: 'the gateway cannot record this request on its meter; nothing was sent upstream',
    retry: true,
  }),
  busy: (message: string): GatewayRefusal => ({ status: 429, type: 'rate_limit_error', message, retry: true }),
  upstreamTimeout: (s: number): GatewayRefusal => ({
    status: 504,
    type: 'upstream_timeout',
    message: `the upstream did not answer within ${s}s`,
    retry: true,
  }),
  upstreamUnreachable: (why: string): GatewayRefusal => ({
    status: 502,
    type: 'upstream_unreachable',
    message: `the upstream cannot be reached (${why})`,
    retry: true,
  }),
};

export function errorBody(provider: Provider, r: GatewayRefusal): unknown {
  return provider === 'anthropic'
    ? { type: 'error', error: { type: r.type, message: r.message } }
    : { error: { message: r.message, type: r.type, code: r.type, param: null } };
}
