/**
 * The upstream keys never leave the gateway, even when an upstream echoes one back: everything relayed to a
 * client (bodies, streams, headers) and everything logged passes through a redactor that replaces each key.
 */
import { Transform, type TransformCallback } from 'node:stream';

const REDACTED = '[redacted upstream key]';

export interface Redactor {
  text(s: string): string;
  /** A stream transform: passes bytes on as they arrive, holding back only a tail that could start a key. */
  stream(): Transform;
}

export function redactorFor(keys: string[]): Redactor {
  const secrets = [...new Set(keys.filter((k) => k.length >= 4))].map((k) => Buffer.from(k));
  const text = (s: string) => secrets.reduce((acc, k) => acc.split(k.toString()).join(REDACTED), s);
  const replaceAll = (buf: Buffer): Buffer => {
    let out = buf;
    for (const k of secrets) {
      if (out.indexOf(k) < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      for (let at = out.indexOf(k); at >= 0; at = out.indexOf(k, from)) {
        parts.push(out.subarray(from, at), Buffer.from(REDACTED));
        from = at + k.length;
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  };
  /** The length of the longest end of `buf` that is the start of a key (bytes that must wait for the next chunk). */
  const heldBack = (buf: Buffer): number => {
    let keep = 0;
    for (const k of secrets)
      for (let n = Math.min(k.length - 1, buf.length); n > keep; n--)
        if (buf.subarray(buf.length - n).equals(k.subarray(0, n))) {
          keep = n;
          break;
        }
    return keep;
  };
  return {
    text,
    stream: () => {
      let tail = Buffer.alloc(0);
      return new Transform({
        transform(chunk: Buffer, _enc, done: TransformCallback) {
          const buf = replaceAll(Buffer.concat([tail, chunk]));
          const keep = heldBack(buf);
          tail = Buffer.from(buf.subarray(buf.length - keep));
          done(null, buf.subarray(0, buf.length - keep));
        },
        flush(done: TransformCallback) {
          done(null, tail);
        },
      });
    },
  };
}
