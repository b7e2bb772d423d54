/** How the sidecar's HTTP API reads bodies and answers errors: strict JSON in, `{error}` out, nothing hidden leaked. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { badRequest, SidecarError } from './errors';

/**
 * JSON bodies are decoded strictly: invalid UTF-8 is named as such (fastify's default parser reports a length
 * mismatch instead), and `__proto__` / `constructor` keys are refused.
 */
export function useStrictJsonBodies(app: FastifyInstance): void {
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch {
      return done(badRequest('the request body is not valid UTF-8'), undefined);
    }
    const forbidden = forbiddenKey(text);
    if (forbidden) return done(badRequest(`invalid request: (body): the key "${forbidden}" is not accepted`), undefined);
    jsonParser(req, text, done);
  });
}

/** A `__proto__` key (or `constructor.prototype`) anywhere in a JSON text, or null (also for text that is not JSON). */
function forbiddenKey(text: string): string | null {
  if (!text.includes('__proto__') && !text.includes('prototype')) return null;
  let found: string | null = null;
  try {
    JSON.parse(text, (k, v: unknown) => {
      if (k === '__proto__' || (k === 'constructor' && typeof v === 'object' && v !== null && 'prototype' in v)) found ??= k;
      return v;
    });
  } catch {
    return null;
  }
  return found;
}

/** A SidecarError's status and message; a zod error as 400 naming each field; anything else 500, its details in the log only. */
export function useErrorReplies(app: FastifyInstance, log: (line: string) => void): void {
  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof SidecarError) return reply.status(err.status).send({ error: err.message });
    if (err instanceof z.ZodError)
      return reply
        .status(400)
        .send({ error: `invalid request: ${err.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}` });
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) return reply.status(status).send({ error: (err as Error).message });
    log(`internal error: ${(err as Error).stack ?? (err as Error).message}`);
    return reply.status(500).send({ error: 'internal error in the eval sidecar (details are in its log)' });
  });
}

/** The deepest nesting of arrays and objects a JSON body may have (deeper ones are refused before they are parsed). */
export const MAX_JSON_DEPTH = 128;

/** Whether a JSON text nests arrays and objects deeper than `max` (a linear scan, before any parse). */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
