/** JSON the way pydantic's `model_dump_json(indent=4)` writes it: floats keep their `.0`. */

export class PyFloat {
  constructor(readonly value: number) {}
}

const MARK = '@@pyfloat@@';

function pyFloatRepr(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : n < 0 ? '-Infinity' : 'NaN';
  const s = String(n);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

export function dumps(value: unknown, indent = 4): string {
  const text = JSON.stringify(value, (_k, v: unknown) => (v instanceof PyFloat ? `${MARK}${pyFloatRepr(v.value)}` : v), indent);
  return text.replace(new RegExp(`"${MARK}([^"]*)"`, 'g'), '$1');
}

/** Wraps a number as a Python float (or passes null through). */
export const f = (n: number | null | undefined): PyFloat | null => (n === null || n === undefined ? null : new PyFloat(n));

/** Trial-level timestamps: UTC with microseconds and a `Z`. */
export function utcZ(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Job-level timestamps: naive local time with microseconds, no offset. */
export function naiveLocal(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}` +
    `.${p(d.getMilliseconds(), 3)}000`
  );
}

/** Harbor's default job name: `%Y-%m-%d__%H-%M-%S` in local time. */
export function defaultJobName(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}__${p(d.getHours())}-${p(d.getMinutes())}-${p(d.getSeconds())}`;
}

/** Recursively drops keys whose value equals the default (pydantic `exclude_defaults`). */
export function excludeDefaults(value: Record<string, unknown>, defaults: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const d = defaults[k];
    if (d !== undefined && comparable(v) === comparable(d)) continue;
    if (isPlainObject(v) && isPlainObject(d)) out[k] = excludeDefaults(v, d);
    else out[k] = v;
  }
  return out;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PyFloat);
}

/** A canonical string for equality (PyFloat and plain numbers compare by value). */
export function comparable(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => {
    if (x instanceof PyFloat) return x.value;
    if (isPlainObject(x)) return Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b)));
    return x;
  });
}
