/**
 * model/shell-word.ts: the one way vero writes a word for a POSIX shell (`vero run --print`, the completion
 * scripts, the sidecar image's RUN lines). What a shell reads back is the word itself, whatever it holds.
 */
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { shellWord } from '../../model/shell-word';

/** The words as `sh` reads them back: one per line of `printf`'s output (NUL-separated, so any line may hold newlines). */
function readBack(words: string[]): string[] {
  const r = spawnSync('sh', ['-c', `printf '%s\\0' ${words.map(shellWord).join(' ')}`], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout.split('\0').slice(0, -1);
}

test.each([
  ['harbor', 'harbor'],
  ['harbor==0.25.0', 'harbor==0.25.0'],
  ['/tmp/my-task', '/tmp/my-task'],
  ['https://example.com/a,b%20c@1+2', 'https://example.com/a,b%20c@1+2'],
  ['', "''"],
  ['two words', "'two words'"],
  ["it's", "'it'\\''s'"],
  ['$HOME', "'$HOME'"],
  ['~', "'~'"],
  ['a*b', "'a*b'"],
  ['x;rm -rf /', "'x;rm -rf /'"],
  ['`id`', "'`id`'"],
  ['pkg[extra]>=1', "'pkg[extra]>=1'"],
])('shellWord(%j) is %s', (word, written) => {
  expect(shellWord(word)).toBe(written);
});

test('a shell reads every word back as it was, whatever it holds', () => {
  // One shell for all the samples: each run's words are read back in order.
  const samples = fc.sample(
    fc.array(
      fc.string({ unit: 'binary', maxLength: 12 }).map((s) => s.replace(/\0/g, '')),
      { minLength: 1, maxLength: 5 },
    ),
    200,
  );
  const words = samples.flat();
  expect(readBack(words)).toEqual(words);
});
