/**
 * The inference gateway's configuration and its admission rules (pure). One section of build.yaml, copied into
 * serve.json: the upstreams (a base URL and the NAME of the environment variable holding its key: the key itself
 * is never in a file), and a policy per scope — the optimizer (producer), the agent's evaluations (evaluation)
 * and the verifier's (finalization), so an exhausted evaluation budget can never cost the reward.
 */
import { z } from 'zod';
import { DurationSeconds } from './durations';

export const GATEWAY_SCOPES = ['producer', 'evaluation', 'finalization'] as const;
export const GatewayScope = z.enum(GATEWAY_SCOPES);
export type GatewayScope = z.infer<typeof GatewayScope>;

export const PROVIDERS = ['openai', 'anthropic'] as const;
export type Provider = (typeof PROVIDERS)[number];

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');

export const Upstream = z.strictObject({
  /** e.g. https://api.openai.com (without /v1) or https://api.anthropic.com. */
  base_url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u) && !/[?#]/.test(u), 'expected an http(s) URL without query or fragment')
    .transform((u) => u.replace(/\/+$/, '')),
  /** The host environment variable with the upstream key (passed to the sidecar only). */
  key_env: EnvName,
});
export type Upstream = z.infer<typeof Upstream>;

export const ScopePolicy = z.strictObject({
  /** Model names the scope may call, exact strings. Empty: none. */
  models: z.array(z.string().min(1)).default([]),
  /** Names a client may use for an allowed model (`fast: gpt-4.1-mini`); the upstream sees the model. */
  aliases: z.record(z.string().min(1), z.string().min(1)).default({}),
  max_requests: z.number().int().min(0).optional(),
  max_input_tokens: z.number().int().min(0).optional(),
  max_output_tokens: z.number().int().min(0).optional(),
  /** Requests of the scope in flight at once; more are answered 429 (retryable), never queued unboundedly. */
  max_concurrency: z.number().int().min(1).default(8),
});
export type ScopePolicy = z.infer<typeof ScopePolicy>;

const NO_ACCESS: ScopePolicy = { models: [], aliases: {}, max_concurrency: 8 };

export const GatewaySpec = z.strictObject({
  /** 0 = any free port (tests). */
  port: z.number().int().min(0).max(65535).default(8001),
  upstreams: z
    .strictObject({ openai: Upstream.optional(), anthropic: Upstream.optional() })
    .refine((u) => u.openai || u.anthropic, 'expected at least one of openai, anthropic'),
  scopes: z
    .strictObject({
      producer: ScopePolicy.default(NO_ACCESS),
      evaluation: ScopePolicy.default(NO_ACCESS),
      finalization: ScopePolicy.default(NO_ACCESS),
    })
    .default({ producer: NO_ACCESS, evaluation: NO_ACCESS, finalization: NO_ACCESS }),
  /** How long one upstream request may take, headers to last byte (a stalled stream is cut off). */
  request_timeout: DurationSeconds.default(600),
  /** The base URL candidates are given (default the sidecar's loopback; a nested container needs the bridge's address). */
  candidate_base_url: z
    .string()
    .url()
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  /** The trusted side's request log: bodies truncated to this many bytes, rotated at max_file_bytes, `keep` files. */
  request_log: z
    .strictObject({
      max_body_bytes: z.number().int().min(0).default(2048),
      max_file_bytes: z
        .number()
        .int()
        .min(1024)
        .default(16 << 20),
      keep: z.number().int().min(1).default(3),
    })
    .default({ max_body_bytes: 2048, max_file_bytes: 16 << 20, keep: 3 }),
});
export type GatewaySpec = z.infer<typeof GatewaySpec>;

/** The environment variable by which `vero run` hands the sidecar the producer token's digest (never the token). */
export const PRODUCER_TOKEN_DIGEST_ENV = 'VERO_GATEWAY_PRODUCER_TOKEN_SHA256';

/** The upstream keys' variable names: what only the gateway's container may hold. */
export const upstreamKeyEnvs = (g: GatewaySpec | undefined): string[] =>
  g ? Object.values(g.upstreams).flatMap((u) => (u ? [u.key_env] : [])) : [];

/**
 * What a client of the gateway is given: each configured provider's SDK key and base-URL variables, the key
 * being the scoped token (OpenAI's base URL ends in /v1, Anthropic's does not).
 */
export function clientEnvFor(upstreams: GatewaySpec['upstreams'], token: string, base: string): Record<string, string> {
  return {
    ...(upstreams.openai ? { OPENAI_API_KEY: token, OPENAI_BASE_URL: `${base}/v1` } : {}),
    ...(upstreams.anthropic ? { ANTHROPIC_API_KEY: token, ANTHROPIC_BASE_URL: base } : {}),
  };
}

/** Where each endpoint goes. Nothing else is forwarded: the upstream path is this table's, never the client's. */
export const ENDPOINTS = {
  'chat.completions': { provider: 'openai', path: '/v1/chat/completions' },
  responses: { provider: 'openai', path: '/v1/responses' },
  messages: { provider: 'anthropic', path: '/v1/messages' },
} as const satisfies Record<string, { provider: Provider; path: string }>;
export type Endpoint = keyof typeof ENDPOINTS;

/** The model a request names, resolved through the scope's aliases; null when the scope may not call it. */
export function resolveModel(policy: ScopePolicy, requested: unknown): string | null {
  if (typeof requested !== 'string') return null;
  const model = policy.aliases[requested] ?? requested;
  return policy.models.includes(model) ? model : null;
}

/** What a scope has spent. Reserved amounts count until the request settles (then its real usage replaces them). */
export interface ScopeUsage {
  requests: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  /** Requests refused because a budget was spent. */
  refused_budget: number;
}

export const emptyUsage = (): ScopeUsage => ({
  requests: 0,
  input_tokens: 0,
  cached_input_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
  refused_budget: 0,
});

/** One request's claim on its scope before it is sent: the worst it can cost. */
export interface Reservation {
  input_tokens: number;
  output_tokens: number;
}

export type Admission =
  | { ok: true; outputCap: number | null }
  | { ok: false; kind: 'budget' | 'concurrency'; limit: string; message: string };

/**
 * Whether a request may go upstream. Budgets are never overspent: the request's input is reserved at its
 * body's length in bytes (a text token is at least one byte), its output at its own max tokens, capped at what
 * is left (the returned `outputCap`, which the gateway writes into the request).
 */
export function admit(policy: ScopePolicy, spent: ScopeUsage, inFlight: number, bodyBytes: number, askedOutput: number | null): Admission {
  const refuse = (limit: string, message: string): Admission => ({ ok: false, kind: 'budget', limit, message });
  if (policy.max_requests !== undefined && spent.requests >= policy.max_requests)
    return refuse('max_requests', `the scope's ${policy.max_requests} requests are spent`);
  if (policy.max_input_tokens !== undefined && spent.input_tokens + bodyBytes > policy.max_input_tokens)
    return refuse(
      'max_input_tokens',
      `the request (up to ${bodyBytes} input tokens) does not fit the ${policy.max_input_tokens - spent.input_tokens} input tokens left`,
    );
  let outputCap: number | null = askedOutput;
  if (policy.max_output_tokens !== undefined) {
    const left = policy.max_output_tokens - spent.output_tokens;
    if (left <= 0) return refuse('max_output_tokens', `the scope's ${policy.max_output_tokens} output tokens are spent`);
    outputCap = askedOutput === null ? left : Math.min(askedOutput, left);
  }
  if (inFlight >= policy.max_concurrency)
    return {
      ok: false,
      kind: 'concurrency',
      limit: 'max_concurrency',
      message: `the scope already has ${policy.max_concurrency} requests in flight; retry shortly`,
    };
  return { ok: true, outputCap };
}
