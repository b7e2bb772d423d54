import { z } from 'zod';

/** A duration in a config file: a number of seconds, or a string such as "90s", "30m", "2h". */
export const DurationSeconds = z.union([
  z.number().positive(),
  z
    .string()
    .regex(/^\d+(\.\d+)?\s*(ms|s|m|h)$/, 'expected a duration such as 90s, 30m or 2h')
    .transform((s) => {
      const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/.exec(s)!;
      const n = Number(m[1]);
      return m[2] === 'ms' ? n / 1000 : m[2] === 's' ? n : m[2] === 'm' ? n * 60 : n * 3600;
    }),
]);
