/**
 * One model request through the gateway: admitted (token, scope policy, a reservation of its worst case on the
 * meter), sent upstream with the gateway's key, relayed back as it arrives (streams too), and settled to the usage
 * the upstream reports; every request, refused or not, is one line of the request log.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { request, type Dispatcher } from 'undici';
import type { Admission, Endpoint, GatewayScope, Provider } from '../../model/gateway/policy';
import { resolveModel } from '../../model/gateway/policy';
import { askedOutputTokens, type MeteredUsage } from '../../model/gateway/provider-usage';
import { requestBound } from '../../model/gateway/request-bound';
import { requestShapeProblem } from '../../model/gateway/request-bound-limits';
import { meteredBody } from './metered-stream';
import { writeOutputCap } from './output-cap';
import type { Settlement } from './meter';
import { errorBody, refusals, type GatewayRefusal } from './provider-errors';
import type { Attribution } from './attribution';
import type { GatewayContext, GatewayDeps } from './gateway-deps';

/** Response headers passed back to the client; everything else (cookies, upstream auth hints) stays upstream. */
const PASSED_RESPONSE_HEADERS = ['content-type', 'retry-after', 'x-request-id', 'request-id', 'openai-processing-ms', 'x-should-retry'];
/** Request headers passed upstream besides the gateway's own authentication. */
const PASSED_REQUEST_HEADERS: Record<Provider, string[]> = {
  openai: ['accept', 'openai-beta'],
  anthropic: ['accept', 'anthropic-version', 'anthropic-beta'],
};

/**
 * The longest task name a base URL may carry (`/task/<encodeURIComponent(name)>/v1`), in UTF-8 bytes: any name
 * a Harbor task dir can have (path components of up to 255 bytes, an org prefix) fits. The router's parameter
 * limit (server.ts) is set from it: percent-encoding at most triples a name.
 */
export const MAX_TASK_NAME_BYTES = 1024;

/** Why a task name from the path cannot label usage, or null: any name vero scores is accepted. */
function badTaskName(task: string): string | null {
  if (task.length === 0 || Buffer.byteLength(task) > MAX_TASK_NAME_BYTES)
    return `the task in the path must be 1 to ${MAX_TASK_NAME_BYTES} bytes`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(task)) return 'the task in the path has a control character';
  return null;
}

/** A header naming what the gateway could not bound about a request it forwarded. */
const WARNING_HEADER = 'x-vero-gateway-warning';

export function presentedToken(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7).trim();
  const key = req.headers['x-api-key'];
  return typeof key === 'string' ? key.trim() : undefined;
}

/** A refusal in the provider's own error shape (its SDK raises the matching error class). */
export const refuse = (reply: FastifyReply, provider: Provider, r: GatewayRefusal) =>
  reply.status(r.status).header('x-should-retry', String(r.retry)).header('content-type', 'application/json').send(errorBody(provider, r));

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

/** A request checked and reserved on the meter, or the refusal to answer it with. */
type Admitted = {
  who: { id: string; scope: GatewayScope };
  entry: { scope: GatewayScope; token: string; endpoint: Endpoint; model: string } & Attribution;
  sent: string;
  stream: boolean;
  reservation: string;
  durable: Promise<void>;
  warning?: string;
};

/** A request's body, checked: an object whose limits, model and stream flag read as the gateway reads them. */
type CheckedBody = { payload: Record<string, unknown>; stamp: Attribution; logRefusal: (status: number, refused: string) => void };

/** Checks the body and the task the path names; a refusal is logged and counted against the token (and its task). */
function checkedBody(d: GatewayDeps, who: Admitted['who'], req: FastifyRequest, endpoint: Endpoint): CheckedBody | GatewayRefusal {
  const body = req.body;
  const task = (req.params as { task?: string } | undefined)?.task;
  const taskProblem = task === undefined ? null : badTaskName(task);
  const isObject = !!body && typeof body === 'object' && !Array.isArray(body);
  const problem = taskProblem ?? (isObject ? requestShapeProblem(body as Record<string, unknown>) : 'expected a JSON object body');
  const payload = isObject ? { ...(body as Record<string, unknown>) } : {};
  const stamp = isObject && !problem ? (d.attribution?.stamp(who.id, task, body) ?? {}) : {};
  const logRefusal = (status: number, refused: string) =>
    d.requestLog.write({
      at: new Date().toISOString(),
      scope: who.scope,
      token: who.id,
      endpoint,
      model: typeof payload.model === 'string' ? payload.model : '(not a string)',
      status,
      ms: 0,
      refused,
      ...stamp,
    });
  if (problem) {
    logRefusal(400, 'malformed');
    // Counted against the token: an evaluation whose call was refused is invalid, never a low score.
    d.meter.refused(who.scope, who.id, taskProblem ? undefined : task, 'refused_policy');
    return refusals.badRequest(problem);
  }
  return { payload, stamp, logRefusal };
}

/** The refusal of a request the meter did not admit, logged. */
function admissionRefusal(admission: Extract<Admission, { ok: false }>, logRefusal: CheckedBody['logRefusal']): GatewayRefusal {
  const refusal =
    admission.kind === 'budget'
      ? refusals.budget(admission.limit, admission.message)
      : admission.kind === 'unbounded'
        ? refusals.unbounded(admission.message)
        : refusals.busy(admission.message);
  logRefusal(refusal.status, admission.kind === 'unbounded' ? 'unbounded_input' : admission.limit);
  return refusal;
}

/** Authenticates, applies the scope's models and aliases, and reserves the request's worst case on the meter. */
function admitRequest(d: GatewayDeps, req: FastifyRequest, endpoint: Endpoint, provider: Provider): Admitted | GatewayRefusal {
  const { spec, meter } = d;
  const who = d.tokens.lookup(presentedToken(req));
  if (!who) return refusals.unauthenticated();
  if (!spec.upstreams[provider] || !d.keys[provider]) return refusals.notFound(`this gateway has no ${provider} upstream`);
  const checked = checkedBody(d, who, req, endpoint);
  if ('status' in checked) return checked;
  const { payload, stamp, logRefusal } = checked;
  const task = (req.params as { task?: string } | undefined)?.task;
  const policy = spec.scopes[who.scope];
  const model = resolveModel(policy, payload.model);
  if (!model) {
    logRefusal(403, 'model');
    meter.refused(who.scope, who.id, task, 'refused_policy');
    return refusals.modelNotAllowed(payload.model, policy.models);
  }
  payload.model = model;
  // A stream reports its usage only when asked to (OpenAI chat): ask, so it can be metered.
  if (payload.stream === true && endpoint === 'chat.completions')
    payload.stream_options = { ...((payload.stream_options as object | undefined) ?? {}), include_usage: true };
  const asked = askedOutputTokens(endpoint, payload);
  const admission = meter.admit(who.scope, who.id, policy, requestBound(endpoint, payload), asked.value, task);
  if (!admission.ok) return admissionRefusal(admission, logRefusal);
  if (admission.outputCap !== null)
    writeOutputCap(payload, { endpoint, field: asked.field, cap: admission.outputCap, baseUrl: spec.upstreams[provider]!.base_url });
  return {
    who,
    entry: { scope: who.scope, token: who.id, endpoint, model, ...stamp },
    sent: JSON.stringify(payload),
    stream: payload.stream === true,
    reservation: admission.reservationId!,
    durable: admission.durable!,
    ...(admission.warning ? { warning: admission.warning } : {}),
  };
}

export async function forward(
  ctx: GatewayContext,
  req: FastifyRequest,
  reply: FastifyReply,
  endpoint: Endpoint,
  provider: Provider,
  path: string,
): Promise<FastifyReply> {
  const { d, timeoutMs } = ctx;
  const { spec, meter } = d;
  const started = Date.now();
  const admitted = admitRequest(d, req, endpoint, provider);
  if ('status' in admitted) return refuse(reply, provider, admitted);
  const { entry, sent, reservation, warning } = admitted;
  const upstream = spec.upstreams[provider]!;

  let settled = false;
  const settle: Settle = (how, status, usage, responseText) => {
    if (settled) return;
    settled = true;
    meter.settle(reservation, how);
    if (endpoint === 'responses' && status < 400) d.attribution?.registerResponse(entry, responseText);
    d.requestLog.write({
      at: new Date().toISOString(),
      ...entry,
      status,
      ms: Date.now() - started,
      ...(usage ? { usage } : {}),
      ...(warning ? { warning } : {}),
      request: d.requestLog.clip(sent),
      response: d.requestLog.clip(responseText === undefined ? undefined : ctx.redact.text(responseText)),
    });
  };
  // The reservation is on disk before anything goes upstream: a crash from here on cannot refill the budget.
  try {
    await admitted.durable;
  } catch (e) {
    settle({ kind: 'refused_upstream' }, 503, null);
    d.log(`gateway: the meter cannot be written (${(e as Error).message}); refusing requests until it can`);
    return refuse(reply, provider, refusals.meterUnwritable());
  }

  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error('timeout')), timeoutMs);
  // A client that goes away does not stop the upstream (which bills what it generates all the same): its answer
  // is read to the end, unrelayed, and settled on the usage it reports (bounded by the reservation and the timeout).
  const client = clientWatch(reply);

  let res: Dispatcher.ResponseData;
  try {
    res = await request(`${upstream.base_url}${path}`, {
      method: 'POST',
      headers: upstreamHeaders(provider, d.keys[provider]!, req.headers),
      body: sent,
      signal: abort.signal,
      dispatcher: ctx.dispatcherFor(upstream.base_url),
    });
  } catch (e) {
    clearTimeout(timer);
    const err = e as Error & { code?: string };
    const timedOut = abort.signal.aborted || err.code === 'UND_ERR_HEADERS_TIMEOUT';
    const r = timedOut
      ? refusals.upstreamTimeout(spec.request_timeout)
      : refusals.upstreamUnreachable(ctx.redact.text(err.code ?? err.message));
    settle({ kind: 'unknown' }, r.status, null);
    return reply.raw.destroyed ? reply : refuse(reply, provider, r);
  }

  if (warning) reply.header(WARNING_HEADER, warning);
  return relay(ctx, reply, res, { endpoint, stream: admitted.stream, client, signal: abort.signal }, () => clearTimeout(timer), settle);
}

/** Whether a body was stopped by the gateway's timeout (its own timer, or undici's body timeout). */
const stoppedByTimeout = (signal: AbortSignal, e: Error) => signal.aborted || (e as { code?: string }).code === 'UND_ERR_BODY_TIMEOUT';

/** Tells when the client went away before its answer was complete. */
function clientWatch(reply: FastifyReply): { whenGone(f: () => void): void } {
  let gone = false;
  let hook: (() => void) | null = null;
  reply.raw.on('close', () => {
    if (reply.raw.writableFinished) return;
    gone = true;
    hook?.();
  });
  return { whenGone: (f) => (gone ? f() : (hook = f)) };
}

type Settle = (how: Settlement, status: number, usage: MeteredUsage | null, responseText?: string) => void;

/** Streams the upstream's answer to the client as it arrives, and settles the reservation when it has ended. */
function relay(
  ctx: GatewayContext,
  reply: FastifyReply,
  res: Dispatcher.ResponseData,
  asked: { endpoint: Endpoint; stream: boolean; client: ReturnType<typeof clientWatch>; signal: AbortSignal },
  ended: () => void,
  settle: Settle,
): FastifyReply {
  const isStream = String(res.headers['content-type'] ?? '').includes('text/event-stream');
  const out = meteredBody(res.body, asked.endpoint, isStream, ({ usage, text, bytes, error }) => {
    ended();
    // A stream the upstream cut off is charged what it reported, or at most what it streamed plus a margin; one
    // the gateway stopped at its timeout, and another body cut off without a usage report, may have cost what was
    // reserved; an error answer without one, nothing.
    const how: Settlement =
      error && (isStream || asked.stream) && !stoppedByTimeout(asked.signal, error)
        ? { kind: 'cut', usage, streamedBytes: bytes }
        : usage
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
    if (typeof v === 'string') reply.header(h, ctx.redact.text(v));
  }
  if (isStream) reply.header('cache-control', 'no-cache');
  // An upstream that echoes its key (in an error body, say) never hands it to the client.
  const redacted = ctx.redact.stream();
  out.on('error', (e) => redacted.destroy(e));
  asked.client.whenGone(() => out.destroy());
  return reply.send(out.pipe(redacted));
}
