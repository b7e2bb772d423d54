/** The agent side's HTTP client of the eval sidecar: its URL, one JSON call, and a call re-sent across restarts. */
import * as http from 'node:http';
import { ConfigError, SidecarError } from '../model/errors';

export function sidecarUrl(flag?: string): URL {
  const raw = flag ?? process.env.VERO_EVAL_URL;
  if (!raw) throw new ConfigError('VERO_EVAL_URL is not set (the compiled task sets it to the eval sidecar); or pass --url');
  try {
    return new URL(raw);
  } catch {
    throw new ConfigError(`VERO_EVAL_URL: "${raw}" is not a URL`);
  }
}

/** JSON over node:http with no client timeout: an evaluation may take hours. */
export function call(
  base: URL,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const url = new URL(route, base);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        headers: { ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let json: unknown = null;
          try {
            json = JSON.parse(text);
          } catch {
            json = null;
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(json);
          else
            reject(
              new SidecarError(
                status,
                `eval sidecar replied ${status}: ${(json as { error?: string } | null)?.error ?? text.slice(0, 500)}`,
              ),
            );
        });
      },
    );
    req.on('error', (e) => reject(new SidecarError(0, `cannot reach the eval sidecar at ${base.href}: ${e.message}`)));
    if (payload) req.write(payload);
    req.end();
  });
}

/**
 * `call`, re-sent while the sidecar cannot be reached or restarts (status 0 or 502-504), for up to 10 minutes
 * (or until `deadline`, a time in ms): with a request id in the body, a re-sent evaluation is never charged twice.
 */
export async function callRetrying(
  base: URL,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
  headers: Record<string, string> = {},
  retryStatuses: number[] = [0, 502, 503, 504],
  deadline?: number,
): Promise<unknown> {
  const until = deadline ?? Date.now() + 10 * 60_000;
  for (let waitMs = 1_000; ; waitMs = Math.min(waitMs * 2, 30_000)) {
    try {
      return await call(base, method, route, body, headers);
    } catch (e) {
      const status = e instanceof SidecarError ? e.status : -1;
      if (!retryStatuses.includes(status) || Date.now() + waitMs > until) throw e;
      process.stderr.write(`${(e as Error).message}; retrying in ${waitMs / 1000}s\n`);
      await new Promise((r) => setTimeout(r, waitMs));
    }
  }
}
