/**
 * The Web UI's "Current Details" of an evaluation or one of its chunks: its progress in a line of Markdown
 * (`setCurrentDetails`, served by the workflow's metadata query: no command, nothing in history). Pure.
 */
import { addCounts, type Progress, type ProgressCounts } from './progress';

/** At most this many progress reports per chunk go to the parent (so its history stays bounded). */
export const MAX_PROGRESS_REPORTS = 20;

/** The counts a chunk reports to its parent as its tasks finish (the `chunkProgress` signal). */
export interface ChunkProgressReport extends ProgressCounts {
  chunkIndex: number;
}

/** Whether a chunk that just finished its `done`-th of `total` tasks reports it: every task, or every 1/MAX step. */
export function reportsProgressAt(done: number, total: number): boolean {
  if (total <= MAX_PROGRESS_REPORTS) return true;
  const step = (n: number) => Math.floor((n * MAX_PROGRESS_REPORTS) / total);
  return step(done) > step(done - 1);
}

/** A progress plus the counts of chunks still running (their last reports). */
export function withReports(p: Progress, reports: Iterable<ChunkProgressReport>): Progress {
  const sum = { ...p };
  for (const r of reports) addCounts(sum, r);
  return sum;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** `, tearing down N` while tasks whose harbors did their work are tearing down (model/evaluation/lane-teardown.ts), else ''. */
export function tearingDownText(p: Pick<Progress, 'tearingDown'>): string {
  return p.tearingDown ? `, tearing down ${p.tearingDown}` : '';
}

/**
 * One line: `**3 / 10 tasks done** · 2 running · 1 error · mean 0.667 over 3 finished (errors count as 0) ·
 * concurrency 4`, with the phase when it is not `running` and the pause while paused.
 */
export function progressDetails(p: Progress, evalId?: string): string {
  const ran = p.done - (p.notRun ?? 0);
  const parts = [
    `**${p.done} / ${p.total} tasks done**`,
    `${p.running} running${tearingDownText(p)}`,
    plural(p.errors, 'error'),
    ran > 0 ? `mean ${(p.scoreSum / ran).toFixed(3)} over ${ran} finished (errors count as 0)` : 'no score yet',
  ];
  if (p.notRun) parts.push(`${p.notRun} not run${p.spendCapReached ? ` (${p.spendCapReached})` : ''}`);
  if (p.concurrency !== undefined) parts.push(`concurrency ${p.concurrency}`);
  if (p.paused)
    parts.push(
      `paused since ${p.paused.since}${p.paused.stopRunning ? ' (running tasks stopped)' : ''}${evalId ? `: vero resume ${evalId}` : ''}`,
    );
  const phase = p.phase === 'running' ? '' : `[${p.phase}] `;
  return phase + parts.join(' · ');
}
