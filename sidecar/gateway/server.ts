/**
 * The inference gateway: OpenAI- and Anthropic-compatible endpoints in front of the real providers. It alone
 * holds the upstream keys; a client presents a scoped token, the request is checked against its scope's policy,
 * reserved on the durable meter, forwarded (streams as they arrive, through undici), and settled to the usage the
 * upstream reports. Only the endpoints of ENDPOINTS are forwarded, to the upstream path of that table.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Agent, EnvHttpProxyAgent } from 'undici';
import { ENDPOINTS, GATEWAY_SCOPES, type Endpoint, type GatewaySpec, type Provider } from '../../model/gateway/policy';
import { forward, MAX_TASK_NAME_BYTES, presentedToken, refuse } from './forward';
import type { Meter } from './meter';
import { refusals } from './provider-errors';
import { redactorFor } from './redact';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../http-json';
import type { GatewayContext, GatewayDeps } from './gateway-deps';

/** The largest request body the gateway reads (a request with a few large images fits). */
const MAX_BODY_BYTES = 32 << 20;

const isLoopback = (url: string) => ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);

/** Usage and limits per scope: numbers only (it is answered without a token; the models are `/v1/models`'). */
export function gatewayStatus(spec: GatewaySpec, meter: Meter) {
  return {
    scopes: Object.fromEntries(
      GATEWAY_SCOPES.map((s) => {
        const limits = Object.fromEntries(Object.entries(spec.scopes[s]).filter(([, v]) => typeof v === 'number'));
        return [s, { limits, usage: meter.usage(s) }];
      }),
    ),
  };
}

export function buildGateway(d: GatewayDeps): FastifyInstance {
  const timeoutMs = d.spec.request_timeout * 1000;
  // Upstreams on this machine are reached directly; others through HTTP(S)_PROXY when the environment names one
  // (NO_PROXY honoured).
  const direct = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const proxyEnv = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].some((v) => process.env[v]);
  const proxied = proxyEnv ? new EnvHttpProxyAgent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs }) : direct;
  const redact = redactorFor(Object.values(d.keys).filter((k): k is string => Boolean(k)));
  const ctx: GatewayContext = { d, timeoutMs, dispatcherFor: (url) => (isLoopback(url) ? direct : proxied), redact };

  const app = Fastify({
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    requestTimeout: 0,
    forceCloseConnections: true,
    // `/task/<name>`: a percent-encoded name of up to MAX_TASK_NAME_BYTES (at most three characters a byte).
    routerOptions: { maxParamLength: 3 * MAX_TASK_NAME_BYTES },
  });
  app.addHook('onClose', async () => {
    await Promise.allSettled([direct.close(), ...(proxied === direct ? [] : [proxied.close()]), d.meter.close()]);
  });

  app.get('/health', async () => ({ ok: true }));
  /** Usage and limits per scope: numbers only, for `vero budget` and the trusted side. */
  app.get('/status', async () => gatewayStatus(d.spec, d.meter));
  // Each endpoint also under /task/<task>: a candidate's base URL names its task, so usage is known per task.
  const models = (req: FastifyRequest, reply: FastifyReply) => listModels(d, req, reply);
  app.get('/v1/models', models);
  app.get('/task/:task/v1/models', models);
  boundedJsonBodies(app);
  for (const [endpoint, { provider, path }] of Object.entries(ENDPOINTS) as [Endpoint, (typeof ENDPOINTS)[Endpoint]][]) {
    // The token is checked before the body is read: an unauthenticated body is never received, nor parsed.
    const onRequest = tokenFirst(d, provider);
    app.post(path, { onRequest }, (req, reply) => forward(ctx, req, reply, endpoint, provider, path));
    app.post(`/task/:task${path}`, { onRequest }, (req, reply) => forward(ctx, req, reply, endpoint, provider, path));
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
    d.log(redact.text(`gateway: internal error on ${req.url}: ${err.stack ?? err.message}`));
    return refuse(reply, 'openai', { status: 500, type: 'gateway_error', message: 'internal error in the gateway', retry: true });
  });
  return app;
}

/** A hook refusing a request without a live token before its body is read (and closing its connection). */
function tokenFirst(d: GatewayDeps, provider: Provider) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (d.tokens.lookup(presentedToken(req))) return;
    reply.header('connection', 'close');
    return refuse(reply, provider, refusals.unauthenticated());
  };
}

/** JSON bodies of at most MAX_BODY_BYTES, refused (400, named) when nested deeper than MAX_JSON_DEPTH, before they are parsed. */
function boundedJsonBodies(app: FastifyInstance): void {
  const jsonParser = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (nestedDeeperThan(body as string, MAX_JSON_DEPTH))
      return done(
        Object.assign(new Error(`the request body is nested deeper than ${MAX_JSON_DEPTH} levels`), { statusCode: 400 }),
        undefined,
      );
    jsonParser(req, body as string, done);
  });
}

/** The models of the caller's scope (and its aliases), as one list both SDKs read. */
function listModels(d: GatewayDeps, req: FastifyRequest, reply: FastifyReply) {
  const who = d.tokens.lookup(presentedToken(req));
  const provider: Provider = req.headers['anthropic-version'] ? 'anthropic' : 'openai';
  if (!who) return refuse(reply, provider, refusals.unauthenticated());
  const policy = d.spec.scopes[who.scope];
  const ids = [...policy.models, ...Object.keys(policy.aliases)];
  // OpenAI's `object`/`owned_by`, Anthropic's `type`/`display_name`/paging fields.
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
}
