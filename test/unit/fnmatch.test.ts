/** Task names reach Harbor's `-i` as exact names; the stand-in matches `-i`/`-x` as Python's fnmatch does. */
import { execFileSync } from 'node:child_process';
import { escapeFnmatch, fnmatchRegex } from '../../model/harbor/fnmatch';

const NAMES = ['t1', 't[1]', 't2', 'star*', 'starry', 'q?', 'qa', 'a[b', 'a]b', 'x^y', 'back\\slash', 'dot.ted', 'dotXted', '!bang'];
const PATTERNS = [
  't[1]',
  't[12]',
  't[!1]',
  'star*',
  'q?',
  '*',
  'a[b',
  'a]b',
  'x^y',
  'back\\slash',
  'dot.ted',
  '[!a-s]*',
  '[]]*',
  '[!]]*',
  '!*',
];

/** What Python's fnmatch.fnmatchcase says for every pattern × name. */
function pythonVerdicts(): boolean[][] {
  const script =
    'import fnmatch, json, sys\nd = json.load(sys.stdin)\nprint(json.dumps([[fnmatch.fnmatchcase(n, p) for n in d["names"]] for p in d["patterns"]]))';
  return JSON.parse(
    execFileSync('python3', ['-c', script], { input: JSON.stringify({ names: NAMES, patterns: PATTERNS }), encoding: 'utf8' }),
  ) as boolean[][];
}

test('fnmatchRegex agrees with Python’s fnmatch on every pattern × name', () => {
  const ours = PATTERNS.map((p) => NAMES.map((n) => fnmatchRegex(p).test(n)));
  expect(ours).toEqual(pythonVerdicts());
});

test('an escaped name matches itself only, in our matcher and in Python’s', () => {
  const escaped = NAMES.map(escapeFnmatch);
  expect(escapeFnmatch('t[1]')).toBe('t[[]1]');
  expect(escapeFnmatch('star*')).toBe('star[*]');
  for (const [i, p] of escaped.entries()) expect(NAMES.filter((n) => fnmatchRegex(p).test(n))).toEqual([NAMES[i]]);
  const script =
    'import fnmatch, json, sys\nd = json.load(sys.stdin)\nprint(json.dumps([[n for n in d["names"] if fnmatch.fnmatchcase(n, p)] for p in d["patterns"]]))';
  const py = JSON.parse(
    execFileSync('python3', ['-c', script], { input: JSON.stringify({ names: NAMES, patterns: escaped }), encoding: 'utf8' }),
  ) as string[][];
  expect(py).toEqual(NAMES.map((n) => [n]));
});
