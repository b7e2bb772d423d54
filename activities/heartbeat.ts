import { Context } from '@temporalio/activity';

/**
 * Heartbeats every `everyMs` while `fn` runs, so a worker that dies mid-activity is noticed after the
 * heartbeat timeout instead of the (much longer) start-to-close timeout.
 */
export async function withHeartbeat<T>(fn: () => Promise<T>, everyMs = 2_000): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), everyMs);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
