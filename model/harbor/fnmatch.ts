/**
 * Python's `fnmatch`, which Harbor applies to `-i` / `-x` task names: `*`, `?`, `[seq]`, `[!seq]`; there is no
 * backslash escape, a character is made literal by putting it in brackets. vero passes task names as exact
 * names (`escapeFnmatch`); the Harbor stand-in matches them as Harbor does (`fnmatchRegex`).
 */

/** A pattern that matches exactly `name`: `t[1]` would also select `t1`, `star*` others. */
export function escapeFnmatch(name: string): string {
  return name.replace(/[*?[]/g, (c) => `[${c}]`);
}

/** fnmatch.translate: the pattern as an anchored regular expression (case-sensitive, as on POSIX). */
export function fnmatchRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[\\s\\S]*';
    else if (c === '?') re += '[\\s\\S]';
    else if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '!') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j++;
      if (j >= pattern.length) re += '\\[';
      else {
        let body = pattern.slice(i + 1, j);
        const negate = body.startsWith('!');
        if (negate) body = body.slice(1);
        body = body.replace(/[\\^\][]/g, '\\$&');
        re += negate ? `[^${body}]` : `[${body}]`;
        i = j;
      }
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
