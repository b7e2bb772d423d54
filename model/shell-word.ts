/** A word as a POSIX shell reads it: as it is when it holds nothing special, else single-quoted. */
const PLAIN = /^[A-Za-z0-9_/.:=@%+,-]+$/;

export const shellWord = (w: string): string => (PLAIN.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
