/**
 * `--wait`'s progress bar: the line fits the terminal's width (the bar shrinks, then the words do), and a paused
 * evaluation says so on it (its counts stop moving, and the reason is on screen).
 */
import { SingleBar } from 'cli-progress';
import type { Progress } from '../model/evaluation/progress';

const FULL = 'tasks {bar} {value}/{total}{paused} | running {running} | errors {errors} | mean {mean} | {elapsed} elapsed, eta {left}';
const SHORT = '{bar} {value}/{total}{paused} | run {running} | err {errors} | {mean} | eta {left}';
/** Room the format's words and values take (counts up to 4 digits, times like 12m05s, "paused" said). */
const TEXT = { full: 95, short: 60 };

/** The bar's format and width for a terminal `columns` wide: the widest bar (10–40) whose line still fits. */
function barLayout(columns: number): { format: string; barsize: number } {
  if (columns - TEXT.full >= 10) return { format: FULL, barsize: Math.min(40, columns - TEXT.full) };
  return { format: SHORT, barsize: Math.max(5, Math.min(40, columns - TEXT.short)) };
}

/** The bar on `stream`, laid out for its width (else $COLUMNS, else 80: a pseudo-terminal may not say). */
export function progressBar(stream: NodeJS.WriteStream): SingleBar {
  const { format, barsize } = barLayout(stream.columns || Number(process.env.COLUMNS) || 80);
  return new SingleBar({ format, barsize, stream, hideCursor: true });
}

/** What the bar shows beside the counts while the evaluation is paused (`vero status ID` says since when, and how to resume). */
export const pausedWord = (p: Progress): string => (p.paused ? ' paused' : '');
