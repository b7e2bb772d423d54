/**
 * Text the optimizer may read that came from untrusted code (an evaluated agent's transcript), with every secret
 * the trusted side knows replaced: the values it was given (at least 4 characters, as written and as JSON escapes
 * them, longest first) and any gateway token, whatever its scope (tokens have one shape: model/gateway/token.ts).
 */
import { anyTokenPattern } from '../gateway/token';

const REDACTED = '[REDACTED]';

/** A gateway token of any scope, the shape `newToken` gives it. */
const GATEWAY_TOKEN = anyTokenPattern();

/**
 * How many bytes more than it keeps a tail must read: the front of a window read from the middle of a file may
 * hold part of a secret, which matches nothing; that much of the front is dropped after redaction (replacements
 * shift the text by at most a few bytes each).
 */
export function tailMargin(secrets: readonly string[]): number {
  return 4 * Math.max(64, ...secrets.map((s) => Buffer.byteLength(JSON.stringify(s))));
}

export function redactSecrets(text: string, secrets: readonly string[]): string {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (s.length < 4) continue;
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
  }
  let out = text;
  for (const s of [...forms].sort((a, b) => b.length - a.length)) out = out.split(s).join(REDACTED);
  return out.replace(GATEWAY_TOKEN, REDACTED);
}

/**
 * The redacted last `maxBytes` bytes (UTF-8, from a character boundary) of a file's tail `window`; `whole` when the
 * window is the whole file, else its front `tailMargin` bytes are dropped after redaction.
 */
export function redactedTail(window: Buffer, whole: boolean, maxBytes: number, secrets: readonly string[]): string {
  const buf = Buffer.from(redactSecrets(window.toString('utf8'), secrets), 'utf8');
  let from = Math.max(whole ? 0 : tailMargin(secrets), buf.length - maxBytes);
  while (from < buf.length && (buf[from]! & 0xc0) === 0x80) from++; // not inside a multi-byte character
  return buf.subarray(from).toString('utf8');
}
