/** Whole-number flags. Its own module, loading nothing else: `vero trials` parses one without cli/options' SDK. */
import { ConfigError } from '../model/errors';

/** A whole number, optionally within [min, max]; anything else is bad input naming the flag. */
export function parseIntFlag(name: string, range?: { min: number; max: number }) {
  return (v: string): number => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || (range && (n < range.min || n > range.max))) {
      throw new ConfigError(`${name}: expected a whole number${range ? ` from ${range.min} to ${range.max}` : ''}, got "${v}"`);
    }
    return n;
  };
}
