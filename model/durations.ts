import { z } from 'zod';

/** Seconds per unit, with the spellings people write: `90s`, `30 min`, `2 hours`, `1d`. */
const UNIT_SECONDS: Record<string, number> = {
  ms: 0.001,
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
};

const DURATION = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i;

export const DURATION_FORMS = 'a number of seconds, or a number with a unit: ms, s, m (min), h (hours) or d (days), e.g. 90s, 30m, 2h, 1d';

/** Seconds of a duration string, or null when it is not one. */
function parseDuration(s: string): number | null {
  const m = DURATION.exec(s.trim());
  const perUnit = m ? UNIT_SECONDS[m[2]!.toLowerCase()] : undefined;
  return m && perUnit !== undefined ? Number(m[1]) * perUnit : null;
}

/** A duration in a config file: a number of seconds, or a string such as "90s", "30m", "2h", "1d", "10 minutes". */
export const DurationSeconds = z
  .union([z.number().positive(), z.string()], { error: `expected a duration: ${DURATION_FORMS}` })
  .transform((v, ctx) => {
    if (typeof v === 'number') return v;
    const seconds = parseDuration(v);
    if (seconds === null || seconds <= 0) {
      ctx.addIssue({ code: 'custom', message: `expected a duration: ${DURATION_FORMS}; got "${v}"` });
      return z.NEVER;
    }
    return seconds;
  });
