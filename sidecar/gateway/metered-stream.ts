/**
 * An upstream response body passed to the client as it arrives, while its usage is read: from the stream's
 * events (SSE, parsed with eventsource-parser) or, for a JSON body, from the whole body once it ends.
 */
import { PassThrough, type Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';
import type { Endpoint } from '../../model/gateway/policy';
import { noUsage, usageOfBody, usageOfEvent, type MeteredUsage } from '../../model/gateway/provider-usage';

/** A JSON response body is kept up to this size to read its usage (larger ones are charged their reservation). */
const MAX_METERED_BYTES = 16 << 20;

export interface BodyOutcome {
  /** The usage the body reported, or null when it reported none. */
  usage: MeteredUsage | null;
  /** What was received, for the request log (the caller truncates it). */
  text: string;
  /** How many bytes arrived. */
  bytes: number;
  /** Set when the body was cut off (a reset or stalled upstream, a client gone). */
  error?: Error;
}

export function meteredBody(body: Readable, endpoint: Endpoint, isStream: boolean, done: (o: BodyOutcome) => void): PassThrough {
  let usage = noUsage();
  let sawUsage = false;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let bytes = 0;
  const parser = createParser({
    onEvent: (ev) => {
      const next = usageOfEvent(endpoint, usage, ev.data);
      if (next !== usage) sawUsage = true;
      usage = next;
    },
  });
  const decoder = new TextDecoder();
  const out = new PassThrough();
  body.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (isStream) parser.feed(decoder.decode(chunk, { stream: true }));
    if (keptBytes < MAX_METERED_BYTES) {
      kept.push(chunk);
      keptBytes += chunk.length;
    }
    // A client gone (its relay destroyed): the body is still read to its end, for its usage.
    if (!out.destroyed && !out.write(chunk)) {
      body.pause();
      out.once('drain', () => body.resume());
    }
  });
  out.once('close', () => body.resume());
  body.on('end', () => {
    const text = Buffer.concat(kept).toString('utf8');
    if (!isStream && keptBytes < MAX_METERED_BYTES) {
      try {
        usage = usageOfBody(endpoint, JSON.parse(text));
        sawUsage = usage.input_tokens !== null || usage.output_tokens !== null;
      } catch {
        // not JSON: no usage
      }
    }
    done({ usage: sawUsage ? usage : null, text, bytes });
    if (!out.destroyed) out.end();
  });
  body.on('error', (e: Error) => {
    done({ usage: sawUsage ? usage : null, text: `(cut off: ${e.message})`, bytes, error: e });
    out.destroy(e);
  });
  return out;
}
