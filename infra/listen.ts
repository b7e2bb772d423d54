/** Starting a local HTTP server's listener, with a port in use (or not allowed) said as bad input, not a stack. */
import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../model/errors';

const WHY: Record<string, string> = {
  EADDRINUSE: 'is already in use',
  EACCES: 'is not allowed for this user',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

/** Listens on host:port; a port in use, not allowed or not local is a ConfigError naming `flag`. Returns the address. */
export async function listenOn(app: FastifyInstance, host: string, port: number, flag: string): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (e) {
    const why = WHY[(e as NodeJS.ErrnoException).code ?? ''];
    if (!why) throw e;
    throw new ConfigError(`${flag}: ${host}:${port} ${why}; pass another ${flag} (0: any free port)`);
  }
}
