/**
 * The inference gateway: OpenAI- and Anthropic-compatible endpoints in front of the real providers. It alone
 * holds the upstream keys; a client presents a scoped token, the request is checked against its scope's policy,
 * reserved on the durable meter, forwarded (streams as they arrive, through undici), and settled to the usage the
 * upstream reports. Only the endpoints of ENDPOINTS are forwarded, to the upstream path of that table.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
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
import { askedOutputTokens, type MeteredUsage } from '../../model/provider-usage';
import { meteredBody } from './metered-stream';
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

/** A task name as it may appear in a candidate's base URL (`/task/<name>/v1`). */
const TASK_LABEL = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$/;

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

/** The headers sent upstream: the gateway's own key, and a few of the client's (never its credentials). */
function upstreamHeaders(provider: Provider, key: string, client: FastifyRequest['headers']): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const h of PASSED_REQUEST_HEADERS[provider]) {
    const v = client[h];
    if (typeof v === 'string') headers[h] = v;
  }
  if (provider === 'openai') headers.authorization = `Bearer ${key}`;
  else {
    headers['x-api-key'] = key;
    headers['anthropic-version'] ??= '2023-06-01';
  }
  return headers;
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

  const models = async (req: FastifyRequest, reply: FastifyReply) => {
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
  };

  // Each endpoint also under /task/<task>: a candidate's base URL names its task, so usage is known per task.
  app.get('/v1/models', models);
  app.get('/task/:task/v1/models', models);
  for (const [endpoint, { provider, path }] of Object.entries(ENDPOINTS) as [Endpoint, (typeof ENDPOINTS)[Endpoint]][]) {
    app.post(path, (req, reply) => forward(req, reply, endpoint, provider, path));
    app.post(`/task/:task${path}`, (req, reply) => forward(req, reply, endpoint, provider, path));
  }

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

  /** A request checked and reserved on the meter, or the refusal to answer it with. */
  type Admitted = {
    who: { id: string; scope: GatewayScope };
    entry: { scope: GatewayScope; token: string; endpoint: Endpoint; model: string };
    sent: string;
    reservation: string;
  };

  /** Authenticates, applies the scope's models and aliases, and reserves the request's worst case on the meter. */
  function admitRequest(req: FastifyRequest, endpoint: Endpoint, provider: Provider): Admitted | GatewayRefusal {
    const who = authenticate(req);
    if (!who) return refusals.unauthenticated();
    if (!spec.upstreams[provider] || !d.keys[provider]) return refusals.notFound(`this gateway has no ${provider} upstream`);
    const body = req.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return refusals.badRequest('expected a JSON object body');
    const payload = { ...(body as Record<string, unknown>) };
    const policy = spec.scopes[who.scope];
    const model = resolveModel(policy, payload.model);
    const logRefusal = (status: number, refused: string) =>
      d.requestLog.write({
        at: new Date().toISOString(),
        scope: who.scope,
        token: who.id,
        endpoint,
        model: String(payload.model),
        status,
        ms: 0,
        refused,
      });
    if (!model) {
      logRefusal(403, 'model');
      return refusals.modelNotAllowed(payload.model, policy.models);
    }
    payload.model = model;
    // A stream reports its usage only when asked to (OpenAI chat): ask, so it can be metered.
    if (payload.stream === true && endpoint === 'chat.completions')
      payload.stream_options = { ...((payload.stream_options as object | undefined) ?? {}), include_usage: true };
    const asked = askedOutputTokens(endpoint, payload);
    const task = (req.params as { task?: string } | undefined)?.task;
    if (task !== undefined && !TASK_LABEL.test(task)) return refusals.badRequest('the task in the path is not a task name');
    const admission = meter.admit(who.scope, who.id, policy, Buffer.byteLength(JSON.stringify(payload)), asked.value, task);
    if (!admission.ok) {
      logRefusal(admission.kind === 'budget' ? 402 : 429, admission.limit);
      return admission.kind === 'budget' ? refusals.budget(admission.limit, admission.message) : refusals.busy(admission.message);
    }
    if (admission.outputCap !== null && admission.outputCap !== asked.value) payload[asked.field] = admission.outputCap;
    return {
      who,
      entry: { scope: who.scope, token: who.id, endpoint, model },
      sent: JSON.stringify(payload),
      reservation: admission.reservationId!,
    };
  }

  async function forward(
    req: FastifyRequest,
    reply: FastifyReply,
    endpoint: Endpoint,
    provider: Provider,
    path: string,
  ): Promise<FastifyReply> {
    const started = Date.now();
    const admitted = admitRequest(req, endpoint, provider);
    if ('status' in admitted) return refuse(reply, provider, admitted);
    const { entry, sent, reservation } = admitted;
    const upstream = spec.upstreams[provider]!;
    const key = d.keys[provider]!;

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
    const headers = upstreamHeaders(provider, key, req.headers);

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

    const isStream = String(res.headers['content-type'] ?? '').includes('text/event-stream');
    const out = meteredBody(res.body, endpoint, isStream, ({ usage, text, error }) => {
      clearTimeout(timer);
      // A body cut off without a usage report may have cost what was reserved; an error answer without one, nothing.
      const how: Settlement = usage
        ? { kind: 'metered', usage }
        : error || res.statusCode < 400
          ? { kind: 'unknown' }
          : { kind: 'refused_upstream' };
      settle(how, res.statusCode, usage, text);
      // The client must see a broken stream, not a short one that looks complete.
      if (error) reply.raw.destroy(error);
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
