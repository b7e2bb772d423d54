/**
 * The inference gateway's configuration and its admission rules (pure). One section of build.yaml, copied into
 * serve.json: the upstreams (a base URL and the NAME of the environment variable holding its key: the key itself
 * is never in a file), and a policy per scope — the optimizer (producer), the agent's evaluations (evaluation)
 * and the verifier's (finalization), so an exhausted evaluation budget can never cost the reward.
 */
import { z } from 'zod';
import { DurationSeconds } from '../durations';
import type { RequestBound } from './request-bound-type';

export const GATEWAY_SCOPES = ['producer', 'evaluation', 'finalization'] as const;
export const GatewayScope = z.enum(GATEWAY_SCOPES);
export type GatewayScope = z.infer<typeof GatewayScope>;

export type Provider = 'openai' | 'anthropic';

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*)');

/**
 * Variables a key may not be read from: what the sidecar's and `main`'s processes need to run (the compose file
 * blanks every `key_env` in `main`, and a key read from PATH would send the host's PATH upstream), the proxy
 * settings the gateway honours, vero's own (VERO_HOME, VERO_EVAL_URL, VERO_GATEWAY_*, VERO_TEMPORAL_*), and the base-URL variables the gateway hands its clients.
 */
const PROCESS_ENV = new Set(
  `PATH HOME USER LOGNAME SHELL PWD OLDPWD TERM LANG LANGUAGE TZ HOSTNAME TMPDIR TMP TEMP SHLVL MAIL DISPLAY XDG_RUNTIME_DIR SSL_CERT_FILE SSL_CERT_DIR HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY OPENAI_BASE_URL ANTHROPIC_BASE_URL LLM_BASE_URL OPENAI_HOST OPENAI_BASE_PATH VERO_HOME VERO_EVAL_URL`.split(
    ' ',
  ),
);
const PROCESS_ENV_PREFIXES = ['LC_', 'LD_', 'DYLD_', 'NODE_', 'NPM_', 'PYTHON', 'VERO_GATEWAY_', 'VERO_TEMPORAL_', 'DOCKER_', 'XDG_'];

/** Why a variable cannot hold an upstream key, or null. */
function reservedKeyEnv(name: string): string | null {
  const upper = name.toUpperCase();
  if (PROCESS_ENV.has(upper) || PROCESS_ENV_PREFIXES.some((p) => upper.startsWith(p)))
    return `${name} is a variable the sidecar's or main's processes need (or the gateway sets); name a variable of your own, e.g. OPENAI_UPSTREAM_KEY`;
  return null;
}

const hasCredentials = (u: string) => {
  try {
    const url = new URL(u);
    return url.username !== '' || url.password !== '';
  } catch {
    return false;
  }
};

const Upstream = z.strictObject({
  /** e.g. https://api.openai.com (without /v1) or https://api.anthropic.com. */
  base_url: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u) && !/[?#]/.test(u), 'expected an http(s) URL without query or fragment')
    .refine((u) => !hasCredentials(u), 'expected a URL without credentials (user:password@): the key goes in key_env')
    .transform((u) => u.replace(/\/+$/, '')),
  /** The host environment variable with the upstream key (passed to the sidecar only). */
  key_env: EnvName.superRefine((name, ctx) => {
    const why = reservedKeyEnv(name);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  }),
});
type Upstream = z.infer<typeof Upstream>;

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
  /**
   * Admit, under an input budget, requests whose input the gateway cannot bound (server-side conversation state,
   * files, server tools): each reserves all the input left, and what the upstream reports may exceed it.
   */
  allow_unbounded_input: z.boolean().default(false),
});
export type ScopePolicy = z.infer<typeof ScopePolicy>;

const NO_ACCESS: ScopePolicy = { models: [], aliases: {}, max_concurrency: 8, allow_unbounded_input: false };

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
    .refine((u) => !hasCredentials(u), 'expected a URL without credentials (user:password@)')
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
      /** Each line also names the caller's task and the conversation it belongs to (sidecar/gateway/attribution.ts). */
      attribution: z.boolean().default(false),
    })
    .default({ max_body_bytes: 2048, max_file_bytes: 16 << 20, keep: 3, attribution: false }),
});
export type GatewaySpec = z.infer<typeof GatewaySpec>;

/** The environment variable by which `vero run` hands the sidecar the producer token's digest (never the token). */
export const PRODUCER_TOKEN_DIGEST_ENV = 'VERO_GATEWAY_PRODUCER_TOKEN_SHA256';

/** The upstream keys' variable names: what only the gateway's container may hold. */
export const upstreamKeyEnvs = (g: GatewaySpec | undefined): string[] =>
  g ? Object.values(g.upstreams).flatMap((u) => (u ? [u.key_env] : [])) : [];

/**
 * What a client of the gateway is given: each configured provider's SDK key and base-URL variables, the key
 * being the scoped token (OpenAI's base URL ends in /v1, Anthropic's does not); for harnesses that read other
 * names, LiteLLM-style LLM_API_KEY/LLM_BASE_URL (openhands-sdk: the OpenAI-compatible URL when there is an
 * OpenAI upstream, else Anthropic's) and goose's OPENAI_HOST (the origin) with OPENAI_BASE_PATH (the rest of the
 * chat completions path, without a leading slash). `base` may hold a `{task}` placeholder after its origin.
 */
export function clientEnvFor(upstreams: GatewaySpec['upstreams'], token: string, base: string): Record<string, string> {
  const [, origin = base, rest = ''] = /^(https?:\/\/[^/]+)(.*)$/.exec(base) ?? [];
  return {
    ...(upstreams.openai ? { OPENAI_API_KEY: token, OPENAI_BASE_URL: `${base}/v1` } : {}),
    ...(upstreams.anthropic ? { ANTHROPIC_API_KEY: token, ANTHROPIC_BASE_URL: base } : {}),
    LLM_API_KEY: token,
    LLM_BASE_URL: upstreams.openai ? `${base}/v1` : base,
    ...(upstreams.openai
      ? { OPENAI_HOST: origin, OPENAI_BASE_PATH: `${rest.replace(/^\/+/, '')}${rest ? '/' : ''}v1/chat/completions` }
      : {}),
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
  /**
   * Requests refused by the scope's policy (a model it may not call, an input it cannot bound, a malformed
   * request): with refused_budget, what makes an evaluation invalid rather than a low score.
   */
  refused_policy: number;
}

export const emptyUsage = (): ScopeUsage => ({
  requests: 0,
  input_tokens: 0,
  cached_input_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
  refused_budget: 0,
  refused_policy: 0,
});

/** One request's claim on its scope before it is sent: the worst it can cost. */
export interface Reservation {
  input_tokens: number;
  output_tokens: number;
}

export type Admission =
  | {
      ok: true;
      /** The output limit of each output, to write into the request (null: the request's own, no limit). */
      outputCap: number | null;
      reserve: Reservation;
      /** Said to the client (a header) and in the request log: what the gateway could not bound. */
      warning?: string;
    }
  | { ok: false; kind: 'budget' | 'concurrency' | 'unbounded'; limit: string; message: string };

const left = (limit: number, spent: number) => Math.max(0, limit - spent);

/**
 * Whether a request may go upstream. Budgets are never overspent by an admitted request: its input is reserved
 * at its bound (text by bytes, images and tools by fixed bounds: model/gateway/request-bound), its output at its own
 * limit times the outputs it asks for (`n`, `best_of`), the limit lowered to what is left (the returned
 * `outputCap`, which the gateway writes into the request). A request whose input no bound covers is refused
 * under an input budget, unless the scope sets `allow_unbounded_input` (then it reserves all the input left).
 */
export function admit(
  policy: ScopePolicy,
  spent: ScopeUsage,
  inFlight: number,
  bound: RequestBound,
  askedOutput: number | null,
): Admission {
  const refuse = (limit: string, message: string, kind: 'budget' | 'concurrency' | 'unbounded' = 'budget'): Admission => ({
    ok: false,
    kind,
    limit,
    message,
  });
  if (policy.max_requests !== undefined && spent.requests >= policy.max_requests)
    return refuse('max_requests', `the scope's ${policy.max_requests} requests are spent`);
  let input = bound.input_tokens;
  let warning: string | undefined;
  if (policy.max_input_tokens !== undefined) {
    const inputLeft = left(policy.max_input_tokens, spent.input_tokens);
    if (inputLeft === 0) return refuse('max_input_tokens', `the scope's ${policy.max_input_tokens} input tokens are spent`);
    if (bound.unbounded !== null) {
      if (!policy.allow_unbounded_input)
        return refuse(
          'max_input_tokens',
          `this request's input cannot be bounded before it is sent (${bound.unbounded}), and this scope has an input budget; send the whole input in the request instead`,
          'unbounded',
        );
      input = inputLeft;
      warning = `input not bounded (${bound.unbounded}): all ${inputLeft} input tokens left were reserved`;
    } else if (input > inputLeft)
      return refuse('max_input_tokens', `the request (up to ${input} input tokens) does not fit the ${inputLeft} input tokens left`);
  } else if (bound.unbounded !== null) warning = `input not bounded (${bound.unbounded}); this scope has no input budget`;
  let outputCap: number | null = askedOutput;
  if (policy.max_output_tokens !== undefined) {
    const outputLeft = left(policy.max_output_tokens, spent.output_tokens);
    if (outputLeft === 0) return refuse('max_output_tokens', `the scope's ${policy.max_output_tokens} output tokens are spent`);
    const perOutput = Math.floor(outputLeft / bound.outputs);
    if (perOutput === 0)
      return refuse(
        'max_output_tokens',
        `the request asks for ${bound.outputs} outputs; the ${outputLeft} output tokens left do not give each one token`,
      );
    outputCap = askedOutput === null ? perOutput : Math.min(askedOutput, perOutput);
  }
  if (inFlight >= policy.max_concurrency)
    return refuse('max_concurrency', `the scope already has ${policy.max_concurrency} requests in flight; retry shortly`, 'concurrency');
  return {
    ok: true,
    outputCap,
    reserve: { input_tokens: input, output_tokens: (outputCap ?? 0) * bound.outputs },
    ...(warning ? { warning } : {}),
  };
}
