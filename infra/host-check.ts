/**
 * The Host check of vero's local HTTP servers (`vero view`, the sidecar's API): a request is answered only when
 * its `Host` names this machine by a loopback name (`localhost`, `*.localhost`), an IP literal, or a name the
 * server was explicitly given. A page on another site whose DNS name was rebound to 127.0.0.1 sends its own name,
 * and is refused (421) before any route runs: it cannot read what the server shows.
 */
import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** The host name in a `Host` header (no port, no IPv6 brackets, lower case, no trailing dot); null if unreadable. */
function hostNameOf(header: string | undefined): string | null {
  if (!header) return null;
  const h = header.trim().toLowerCase();
  const name = h.startsWith('[') ? /^\[([^\]]+)\](:\d+)?$/.exec(h)?.[1] : /^([^:]+)(:\d+)?$/.exec(h)?.[1];
  return name ? name.replace(/\.$/, '') : null;
}

/** Whether a request with this `Host` header may be answered; `names` are the host names given explicitly. */
export function hostAllowed(header: string | undefined, names: readonly string[] = []): boolean {
  const name = hostNameOf(header);
  if (name === null) return false;
  if (isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return true;
  return names.some((n) => hostNameOf(n) === name);
}

/** Refuses every request whose `Host` is not allowed (hostAllowed), with 421 and the reason. */
export function refuseForeignHosts(app: FastifyInstance, names: readonly string[] = []): void {
  app.addHook('onRequest', async (req, reply) => {
    if (hostAllowed(req.headers.host, names)) return;
    await reply
      .code(421)
      .header('content-type', 'text/plain; charset=utf-8')
      .send(`refused: Host "${req.headers.host ?? ''}" is not this machine's loopback name or an address it was given\n`);
  });
}
