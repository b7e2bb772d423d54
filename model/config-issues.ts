/**
 * How a config loader reports what is wrong with a file: every zod issue as one `file: path.to.field: problem`
 * line, blamed on the flag that set a value when one did, with the nearest known key for an unknown one. Pure.
 */
import type { z } from 'zod';

/** An issue's message; a number out of a double's range (YAML's `1e309` is Infinity) says a finite number was expected. */
function issueMessage(i: z.core.$ZodIssue): string {
  const received = (i as { received?: unknown }).received;
  if (i.code === 'invalid_type' && i.expected === 'number' && typeof received === 'string' && /Infinity|NaN/.test(received))
    return `expected a finite number, got ${received === 'NaN' ? 'NaN' : 'infinity (a number beyond ±1.8e308)'}`;
  return i.message;
}

/**
 * Formats zod issues as `file: path.to.field: problem` lines. `flags` maps dotted paths set from the command line to the flag that set them (`execution.concurrency` →
 * `--concurrency`): a bad value there is blamed on the flag, not on the file.
 */
export function formatZodIssues(issues: z.core.$ZodIssue[], where: string, schema?: z.ZodType, flags: Record<string, string> = {}): string {
  return issues
    .map((i) => ({ ...i, message: issueMessage(i) }) as z.core.$ZodIssue)
    .flatMap((i) => {
      const at = i.path.length ? i.path.join('.') : '(top level)';
      const flag = Object.entries(flags).find(([p]) => at === p || at.startsWith(`${p}.`))?.[1];
      if (flag) return [`${flag}: ${i.message}${at.includes('.') ? ` (${at})` : ''}`];
      if (i.code === 'unrecognized_keys') {
        // One line per key, with the nearest key the schema knows there when it is a likely typo.
        const known = schema ? knownKeysAt(schema, i.path) : [];
        return (i as { keys: string[] }).keys.map((k) => {
          const guess = closestKey(k, known);
          return `${where}: ${i.path.length ? `${at}.${k}` : k}: unknown key${guess ? ` (did you mean ${guess}?)` : ''}`;
        });
      }
      return [`${where}: ${at}: ${i.message}`];
    })
    .join('\n');
}

/** The keys an object schema accepts at `path` (through defaults, optionals, arrays, records and pipes), or []. */
function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s: unknown = schema;
  const def = (x: unknown) => (x as { def?: Record<string, unknown> }).def ?? {};
  const unwrap = (x: unknown): unknown => {
    for (let d = def(x); ['default', 'optional', 'nullable', 'prefault', 'catch', 'readonly', 'pipe'].includes(String(d.type)); d = def(x))
      x = d.type === 'pipe' ? d.in : d.innerType;
    return x;
  };
  for (const key of path) {
    const d = def(unwrap(s));
    if (d.type === 'object') s = (d.shape as Record<string, unknown>)[String(key)];
    else if (d.type === 'array') s = d.element;
    else if (d.type === 'record') s = d.valueType;
    else return [];
    if (s === undefined) return [];
  }
  const d = def(unwrap(s));
  return d.type === 'object' ? Object.keys(d.shape as Record<string, unknown>) : [];
}

/** The known key nearest to `key` when it is a likely typo (edit distance at most a third of its length), else null. */
function closestKey(key: string, known: readonly string[]): string | null {
  let best: { k: string; d: number } | null = null;
  for (const k of known) {
    const d = editDistance(key.toLowerCase(), k.toLowerCase());
    if (!best || d < best.d) best = { k, d };
  }
  return best && best.d <= Math.max(1, Math.floor(key.length / 3)) ? best.k : null;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
