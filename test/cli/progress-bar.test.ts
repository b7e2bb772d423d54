/**
 * `--wait`'s bar as a terminal of a given width shows it: the whole line fits (nothing cut at the edge, eta
 * included), and a paused evaluation says `paused` with how to resume it.
 */
import { PassThrough } from 'node:stream';
import { pausedWord, progressBar } from '../../cli/progress-bar';
import type { Progress } from '../../model/evaluation/progress';

/** The last frame the bar drew on a terminal `columns` wide. */
function frame(columns: number, paused: string): string {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const stream = Object.assign(out, { columns, isTTY: true, cursorTo: () => true, clearLine: () => true, moveCursor: () => true });
  const bar = progressBar(stream as unknown as NodeJS.WriteStream);
  const values = { running: 12, errors: 3, mean: '0.750', elapsed: '12m05s', left: '3m10s', paused };
  bar.start(1200, 345, values);
  bar.update(346, values);
  bar.stop();
  // Each frame follows an escape sequence (ESC [1G: back to the first column); the sequences are not the line's.
  const lines = text
    .split(String.fromCharCode(27))
    .map((part) => part.replace(/^(\[[0-9;?]*[A-Za-z]|[78])/, '').replace(/[\r\n]/g, ''))
    .filter(Boolean);
  return lines[lines.length - 1]!;
}

test.each([60, 80, 100, 132, 200])('at %i columns the whole line fits', (columns) => {
  const line = frame(columns, pausedWord({ paused: { since: 'now', stopRunning: false } } as unknown as Progress));
  expect(line.length).toBeLessThanOrEqual(columns);
  expect(line).toMatch(/eta 3m10s$/);
  expect(line).toContain('346/1200 paused |');
});

test('not paused: no word of it', () => {
  expect(frame(120, pausedWord({} as Progress))).not.toContain('paused');
});
