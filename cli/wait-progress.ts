/**
 * `vero start-eval --wait`: follows an evaluation to its end with a progress bar (a terminal) or progress lines,
 * saying why it is not moving when Temporal knows (an activity retrying) and when the server is out.
 */
import { tearingDownText } from '../model/evaluation/progress-details';
import type { Client } from '@temporalio/client';
import type { SingleBar } from 'cli-progress';
import type { CandidateResult } from '../model/evaluation/candidate-result';
import type { Progress } from '../model/evaluation/progress';
import { awaitResult } from '../client/eval-results';
import { getProgress, retryingActivities } from '../client/running-eval';
import { pausedWord, progressBar } from './progress-bar';

/** `42s`, `3m05s`, `2h10m`. */
function fmtDuration(sec: number): string {
  const s = Math.round(sec);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Follows an evaluation to its end with a progress bar (a terminal) or progress lines. Ctrl-C stops the waiting,
 * not the evaluation: the bar is stopped first (the terminal gets its line wrapping and cursor back), then
 * `interruptHint` is printed whole, and the process exits 130.
 */
export async function waitWithProgress(client: Client, evalId: string, quiet: boolean, interruptHint: string): Promise<CandidateResult> {
  const watched = watchResult(client, evalId);
  const view = new ProgressView(quiet);
  process.once('SIGINT', () => {
    view.stop();
    process.stderr.write(`\n${interruptHint}\n`);
    process.exit(130);
  });
  const whyStuck = new WhyStuck(client, evalId, view);
  while (!watched.settled()) {
    let polled: Progress | null = null;
    try {
      // Bounded: with no worker a query waits long, and the reason for the wait is what to show meanwhile.
      polled = await client.connection.withDeadline(Date.now() + 5000, () => getProgress(client, evalId));
      view.show(polled);
    } catch {
      /* no worker has picked the workflow up yet */
    }
    await whyStuck.say(polled).catch(() => undefined);
    await Promise.race([watched.result.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
  }
  if (view.drawn) view.finish(await watched.result.catch(() => null));
  return watched.result;
}

/** The evaluation's result, and whether it has come; a server outage is said once per outage (not on every retry), and always. */
function watchResult(client: Client, evalId: string): { result: Promise<CandidateResult>; settled: () => boolean } {
  let lastOutage = 0;
  const result = awaitResult(client, evalId, (message) => {
    // A silent wait looks like a hang.
    if (Date.now() - lastOutage > 60_000) process.stderr.write(`\n${message}\n`);
    lastOutage = Date.now();
  });
  let settled = false;
  const settle = () => (settled = true);
  void result.then(settle, settle);
  return { result, settled: () => settled };
}

/**
 * The progress shown: a bar on a terminal (`running` counts harbor processes, tasks in flight; the bar fits the
 * terminal, and says when it is paused), else a line each time it changes. The ETA is this process's own
 * observation: tasks finished since it began watching, at that rate.
 */
class ProgressView {
  private readonly bar: SingleBar | null;
  private started = false;
  private lastLine = '';
  private readonly began = Date.now();
  private firstDone: number | null = null;

  constructor(private readonly quiet: boolean) {
    this.bar = process.stderr.isTTY && !quiet ? progressBar(process.stderr) : null;
  }

  /** The bar is on screen: a line written meanwhile starts on a line of its own. */
  get drawn(): boolean {
    return this.bar !== null && this.started;
  }

  show(p: Progress): void {
    const ran = p.done - (p.notRun ?? 0);
    const mean = ran ? (p.scoreSum / ran).toFixed(3) : '-';
    if (this.bar) {
      const times = { elapsed: fmtDuration((Date.now() - this.began) / 1000), left: this.eta(p), paused: pausedWord(p) };
      if (!this.started)
        this.bar.start(p.total, p.done, { running: `${p.running}${tearingDownText(p)}`, errors: p.errors, mean, ...times });
      this.started = true;
      this.bar.update(p.done, { running: `${p.running}${tearingDownText(p)}`, errors: p.errors, mean, ...times });
    } else if (!this.quiet) {
      const capped = p.spendCapReached ? `, ${p.notRun ?? 0} not run (${p.spendCapReached})` : '';
      const elapsed = `${Math.round((Date.now() - this.began) / 1000)}s elapsed`;
      const line = `[${p.paused ? 'paused' : p.phase}] ${p.done}/${p.total} done, ${p.running} running${tearingDownText(p)}, ${p.errors} errors, mean ${mean}${capped}`;
      if (line !== this.lastLine) process.stderr.write(`${line}, ${elapsed}\n`);
      this.lastLine = line;
    }
  }

  /** The last frame is the final state (when there is one), not the last poll's; then the bar goes. */
  finish(final: CandidateResult | null): void {
    const elapsed = fmtDuration((Date.now() - this.began) / 1000);
    if (final)
      this.bar?.update(final.nTasks, { running: 0, errors: final.nErrors, mean: final.score.toFixed(3), elapsed, left: '0s', paused: '' });
    this.stop();
  }

  stop(): void {
    if (this.drawn) this.bar!.stop();
  }

  private eta(p: Progress): string {
    const from = (this.firstDone ??= p.done);
    const finished = p.done - from;
    if (finished <= 0) return '-';
    return fmtDuration((((Date.now() - this.began) / 1000) * (p.total - p.done)) / finished);
  }
}

/**
 * Why it is not moving, from Temporal (an activity retrying after a failure: the preflight with Docker down),
 * said once per new reason rather than "preparing" for minutes.
 */
class WhyStuck {
  private readonly said = new Set<string>();
  private lastLook = 0;

  constructor(
    private readonly client: Client,
    private readonly evalId: string,
    private readonly view: ProgressView,
  ) {}

  async say(p: Progress | null): Promise<void> {
    if ((p && p.phase !== 'preparing' && p.running > 0) || Date.now() - this.lastLook < 3000) return;
    this.lastLook = Date.now();
    const reasons = retryingActivities(await this.client.workflow.getHandle(this.evalId).describe()).filter(
      (r) => !this.said.has(r.replace(/\(attempt \d+\)/, '')),
    );
    for (const r of reasons) this.said.add(r.replace(/\(attempt \d+\)/, ''));
    if (reasons.length) process.stderr.write(`${this.view.drawn ? '\n' : ''}${reasons.map((r) => `waiting: ${r}`).join('\n')}\n`);
  }
}
