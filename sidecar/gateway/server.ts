/**
 * The inference gateway: OpenAI- and Anthropic-compatible endpoints in front of the real providers. It alone
 * holds the upstream keys; a client presents a scoped token, the request is checked against its scope's policy,
 * reserved on the durable meter, forwarded (streams as they arrive, through undici), and settled to the usage the
 * upstream reports. Only the endpoints of ENDPOINTS are forwarded, to the upstream path of that table.
 */
import { PassThrough } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createParser } from 'eventsource-parser';
import { Agent, EnvHttpProxyAgent, request, type Dispatcher } from 'undici';
import {
  ENDPOINTS,
  GATEWAY_SCOPES,
  type Endpoint,
  type GatewayScope,
  type GatewaySpec,
  type Provider,
  resolveModel,
} from '../../model/gateway-policy';
import { askedOutputTokens, noUsage, usageOfBody, usageOfEvent, type MeteredUsage } from '../../model/provider-usage';
import type { Meter, Settlement } from './meter';
import { errorBody, refusals, type GatewayRefusal } from './provider-errors';
import type { RequestLog } from './request-log';
import type { TokenStore } from './tokens';

export interface GatewayDeps {
  spec: GatewaySpec;
  /** Upstream keys by provider, from the sidecar's environment. */
  keys: Partial<Record<Provider, string>>;
  tokens: TokenStore;
  meter: Meter;
  requestLog: RequestLog;
  log: (line: string) => void;
}

/** Response headers passed back to the client; everything else (cookies, upstream auth hints) stays upstream. */
const PASSED_RESPONSE_HEADERS = ['content-type', 'retry-after', 'x-request-id', 'request-id', 'openai-processing-ms', 'x-should-retry'];
/** Request headers passed upstream besides the gateway's own authentication. */
const PASSED_REQUEST_HEADERS: Record<Provider, string[]> = {
  openai: ['accept', 'openai-beta'],
  anthropic: ['accept', 'anthropic-version', 'anthropic-beta'],
};
/** A JSON response body is kept up to this size to read its usage (larger ones are charged their reservation). */
const MAX_METERED_JSON_BYTES = 16 << 20;

const isLoopback = (url: string) => ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);

function presentedToken(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7).trim();
  const key = req.headers['x-api-key'];
  return typeof key === 'string' ? key.trim() : undefined;
}

/** Usage and limits per scope. */
export function gatewayStatus(spec: GatewaySpec, meter: Meter) {
  return {
    scopes: Object.fromEntries(
      GATEWAY_SCOPES.map((s) => {
        const { models, aliases, ...limits } = spec.scopes[s];
        return [s, { models, aliases: Object.keys(aliases), limits, usage: meter.usage(s) }];
      }),
    ),
  };
}

export function buildGateway(d: GatewayDeps): FastifyInstance {
  const { spec, meter, tokens } = d;
  const timeoutMs = spec.request_timeout * 1000;
  // Upstreams on this machine are reached directly; others through HTTP(S)_PROXY when the environment names one
  // (NO_PROXY honoured).
  const direct = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const proxyEnv = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].some((v) => process.env[v]);
  const proxied = proxyEnv ? new EnvHttpProxyAgent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs }) : direct;
  const dispatcherFor = (url: string): Dispatcher => (isLoopback(url) ? direct : proxied);

  const app = Fastify({ logger: false, bodyLimit: 32 << 20, requestTimeout: 0, forceCloseConnections: true });
  app.addHook('onClose', async () => {
    await Promise.allSettled([direct.close(), ...(proxied === direct ? [] : [proxied.close()])]);
  });

  const refuse = (reply: FastifyReply, provider: Provider, r: GatewayRefusal) =>
    reply
      .status(r.status)
      .header('x-should-retry', String(r.retry))
      .header('content-type', 'application/json')
      .send(errorBody(provider, r));

  const authenticate = (req: FastifyRequest) => tokens.lookup(presentedToken(req));

  app.get('/health', async () => ({ ok: true }));

  /** Usage and limits per scope: numbers only, for `vero budget` and the trusted side. */
  app.get('/status', async () => gatewayStatus(spec, meter));

  app.get('/v1/models', async (req, reply) => {
    const who = authenticate(req);
    const provider: Provider = req.headers['anthropic-version'] ? 'anthropic' : 'openai';
    if (!who) return refuse(reply, provider, refusals.unauthenticated());
    const policy = spec.scopes[who.scope];
    const ids = [...policy.models, ...Object.keys(policy.aliases)];
    // One list both SDKs read: OpenAI's `object`/`owned_by`, Anthropic's `type`/`display_name`/paging fields.
    return {
      object: 'list',
      data: ids.map((id) => ({
        id,
        object: 'model',
        type: 'model',
        display_name: id,
        created: 0,
        created_at: '1970-01-01T00:00:00Z',
        owned_by: 'vero-gateway',
      })),
      has_more: false,
      first_id: ids[0] ?? null,
      last_id: ids.at(-1) ?? null,
    };
  });

  for (const [endpoint, { provider, path }] of Object.entries(ENDPOINTS) as [Endpoint, (typeof ENDPOINTS)[Endpoint]][])
    app.post(path, (req, reply) => forward(req, reply, endpoint, provider, path));

  app.setNotFoundHandler((req, reply) =>
    refuse(
      reply,
      req.url.startsWith('/v1/messages') ? 'anthropic' : 'openai',
      refusals.notFound(`${req.method} ${req.url.split('?')[0]} is not an endpoint of this gateway`),
    ),
  );
  app.setErrorHandler((err, req, reply) => {
    const status = (err as { statusCode?: number }).statusCode ?? 500;
    if (status < 500) return refuse(reply, 'openai', refusals.badRequest(err.message));
    d.log(`gateway: internal error on ${req.url}: ${err.stack ?? err.message}`);
    return refuse(reply, 'openai', { status: 500, type: 'gateway_error', message: 'internal error in the gateway', retry: true });
  });

  async function forward(
    req: FastifyRequest,
    reply: FastifyReply,
    endpoint: Endpoint,
    provider: Provider,
    path: string,
  ): Promise<FastifyReply> {
    const started = Date.now();
    const who = authenticate(req);
    if (!who) return refuse(reply, provider, refusals.unauthenticated());
    const upstream = spec.upstreams[provider];
    const key = d.keys[provider];
    if (!upstream || !key) return refuse(reply, provider, refusals.notFound(`this gateway has no ${provider} upstream`));
    const body = req.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return refuse(reply, provider, refusals.badRequest('expected a JSON object body'));
    const payload = { ...(body as Record<string, unknown>) };
    const policy = spec.scopes[who.scope];
    const model = resolveModel(policy, payload.model);
    const entry = { scope: who.scope, token: who.id, endpoint, model };
    if (!model) {
      d.requestLog.write({ at: new Date().toISOString(), ...entry, model: String(payload.model), status: 403, ms: 0, refused: 'model' });
      return refuse(reply, provider, refusals.modelNotAllowed(payload.model, policy.models));
    }
    payload.model = model;
    const streaming = payload.stream === true;
    // A stream reports its usage only when asked to (OpenAI chat): ask, so it can be metered.
    if (streaming && endpoint === 'chat.completions')
      payload.stream_options = { ...((payload.stream_options as object | undefined) ?? {}), include_usage: true };

    const asked = askedOutputTokens(endpoint, payload);
    const firstDraft = Buffer.byteLength(JSON.stringify(payload));
    const admission = meter.admit(who.scope, who.id, policy, firstDraft, asked.value);
    if (!admission.ok) {
      d.requestLog.write({
        at: new Date().toISOString(),
        ...entry,
        status: admission.kind === 'budget' ? 402 : 429,
        ms: 0,
        refused: admission.limit,
      });
      return refuse(
        reply,
        provider,
        admission.kind === 'budget' ? refusals.budget(admission.limit, admission.message) : refusals.busy(admission.message),
      );
    }
    if (admission.outputCap !== null && admission.outputCap !== asked.value) payload[asked.field] = admission.outputCap;
    const sent = JSON.stringify(payload);
    const reservation = admission.reservationId!;

    let settled = false;
    const settle = (how: Settlement, status: number, usage: MeteredUsage | null, responseText?: string) => {
      if (settled) return;
      settled = true;
      meter.settle(reservation, how);
      d.requestLog.write({
        at: new Date().toISOString(),
        ...entry,
        status,
        ms: Date.now() - started,
        ...(usage ? { usage } : {}),
        request: d.requestLog.clip(sent),
        response: d.requestLog.clip(responseText),
      });
    };

    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error('timeout')), timeoutMs);
    // A client that goes away stops the upstream request (what it already cost stays charged).
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort(new Error('client closed'));
    });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    for (const h of PASSED_REQUEST_HEADERS[provider]) {
      const v = req.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    if (provider === 'openai') headers.authorization = `Bearer ${key}`;
    else {
      headers['x-api-key'] = key;
      headers['anthropic-version'] ??= '2023-06-01';
    }

    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${upstream.base_url}${path}`, {
        method: 'POST',
        headers,
        body: sent,
        signal: abort.signal,
        dispatcher: dispatcherFor(upstream.base_url),
      });
    } catch (e) {
      clearTimeout(timer);
      const err = e as Error & { code?: string };
      const timedOut = abort.signal.aborted || err.code === 'UND_ERR_HEADERS_TIMEOUT';
      const r = timedOut ? refusals.upstreamTimeout(spec.request_timeout) : refusals.upstreamUnreachable(err.code ?? err.message);
      settle({ kind: 'unknown' }, r.status, null);
      if (reply.raw.destroyed) return reply;
      return refuse(reply, provider, r);
    }

    const contentType = String(res.headers['content-type'] ?? '');
    const isStream = contentType.includes('text/event-stream');
    let usage = noUsage();
    let sawUsage = false;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const parser = createParser({
      onEvent: (ev) => {
        const next = usageOfEvent(endpoint, usage, ev.data);
        if (next !== usage) sawUsage = true;
        usage = next;
      },
    });
    const decoder = new TextDecoder();
    const out = new PassThrough();
    res.body.on('data', (chunk: Buffer) => {
      if (isStream) parser.feed(decoder.decode(chunk, { stream: true }));
      if (keptBytes < MAX_METERED_JSON_BYTES) {
        kept.push(chunk);
        keptBytes += chunk.length;
      }
      if (!out.write(chunk)) {
        res.body.pause();
        out.once('drain', () => res.body.resume());
      }
    });
    res.body.on('end', () => {
      clearTimeout(timer);
      const text = Buffer.concat(kept).toString('utf8');
      if (!isStream && keptBytes < MAX_METERED_JSON_BYTES) {
        try {
          usage = usageOfBody(endpoint, JSON.parse(text));
          sawUsage = usage.input_tokens !== null || usage.output_tokens !== null;
        } catch {
          // not JSON: charged as below
        }
      }
      const how: Settlement = sawUsage
        ? { kind: 'metered', usage }
        : res.statusCode >= 400
          ? { kind: 'refused_upstream' }
          : { kind: 'unknown' };
      settle(how, res.statusCode, sawUsage ? usage : null, text);
      out.end();
    });
    res.body.on('error', (e: Error) => {
      clearTimeout(timer);
      // Cut off mid-way (a stalled or reset upstream, a client gone): what it may have cost is charged.
      settle(
        sawUsage ? { kind: 'metered', usage } : { kind: 'unknown' },
        res.statusCode,
        sawUsage ? usage : null,
        `(cut off: ${e.message})`,
      );
      // The client must see a broken stream, not a short one that looks complete.
      out.destroy(e);
      reply.raw.destroy(e);
    });

    reply.status(res.statusCode);
    for (const h of PASSED_RESPONSE_HEADERS) {
      const v = res.headers[h];
      if (typeof v === 'string') reply.header(h, v);
    }
    if (isStream) reply.header('cache-control', 'no-cache');
    return reply.send(out);
  }

  return app;
}

/** Which token scope an evaluation's requests use. */
export type EvaluationScope = Extract<GatewayScope, 'evaluation' | 'finalization'>;
