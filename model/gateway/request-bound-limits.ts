/**
 * The fields a request's worst case is read from, checked before anything is reserved (pure): an upstream that
 * coerces `"10"` or `10.5` into a number, or reads 0 as "no limit", must never see a value the gateway read
 * otherwise. Every limit field the gateway reads must be a positive integer when it is present (null is absent);
 * `model` a string; `stream` a boolean; `stream_options` an object.
 */

/** Where each limit field is, as a path in the body (the output limits, the outputs, the reasoning budgets). */
const LIMIT_FIELDS: readonly (readonly string[])[] = [
  ['n'],
  ['best_of'],
  ['max_tokens'],
  ['max_completion_tokens'],
  ['max_output_tokens'],
  ['thinking', 'budget_tokens'],
  ['reasoning', 'max_tokens'],
  ['reasoning', 'budget_tokens'],
];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const shown = (v: unknown) =>
  typeof v === 'string' ? `the string ${JSON.stringify(v.slice(0, 40))}` : (JSON.stringify(v) ?? String(typeof v));

/** The value at a path of the body (undefined when any step is missing). */
function at(body: Record<string, unknown>, route: readonly string[]): unknown {
  let v: unknown = body;
  for (const k of route) v = isObj(v) && Object.hasOwn(v, k) ? v[k] : undefined;
  return v;
}

/** Why a request's limit fields, model or stream flag cannot be read as the gateway reads them, or null. */
export function requestShapeProblem(body: Record<string, unknown>): string | null {
  if (typeof body.model !== 'string') return `model must be a string (got ${shown(body.model)})`;
  for (const route of LIMIT_FIELDS) {
    const v = at(body, route);
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
      return `${route.join('.')} must be a positive integer (got ${shown(v)}): the gateway reserves by it, and an upstream may read it otherwise`;
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    return `stream must be true or false (got ${shown(body.stream)})`;
  if (body.stream_options !== undefined && body.stream_options !== null && !isObj(body.stream_options))
    return `stream_options must be an object (got ${shown(body.stream_options)})`;
  return null;
}
