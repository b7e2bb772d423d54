/**
 * snake_case field names to camelCase, deeply (`mean_score` → `meanScore`), for the `--json` of the commands
 * that print the sidecar API's answers: every `vero … --json` is camelCase. Objects whose keys are data, not
 * field names (a gateway's `scopes`, keyed by scope name), keep their keys.
 */
const camel = (k: string): string => k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

export function camelCaseKeys(value: unknown, dataKeyed: ReadonlySet<string> = new Set(['scopes']), keepKeys = false): unknown {
  if (Array.isArray(value)) return value.map((v) => camelCaseKeys(v, dataKeyed));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([k, v]) => [
      keepKeys ? k : camel(k),
      camelCaseKeys(v, dataKeyed, dataKeyed.has(k)),
    ]),
  );
}
