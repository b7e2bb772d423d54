/**
 * The eval budget. Check-and-reserve is atomic (one mutex, one process), and the reservation is durable before
 * the evaluation starts. A restart reloads it (no refill); a corrupt ledger fails closed; only an early-stopped
 * evaluation's unrun cases are refunded (a `refunds` entry, once per evaluation).
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import type { ServeConfig } from '../model/compiled-task/serve-config';
import { Mutex, writeJsonDurable } from '../infra/atomic-file';
import { budgetExceeded, conflict, notEvaluable } from './errors';
import { LedgerCorruptError } from '../model/errors';

const LedgerRefund = z.strictObject({
  /** The early-stopped evaluation's key: refunded once, however often it is re-decided. */
  key: z.string(),
  split: z.string(),
  n: z.number().int().min(1),
  at: z.string(),
  why: z.string(),
});
export type LedgerRefund = z.infer<typeof LedgerRefund>;

const Entry = z.strictObject({
  total_run_budget: z.number().int().nullable(),
  remaining_run_budget: z.number().int().nullable(),
  total_sample_budget: z.number().int().nullable(),
  remaining_sample_budget: z.number().int().nullable(),
  max_samples_per_run: z.number().int().nullable(),
});
export const LedgerFile = z.strictObject({
  schema_version: z.literal(1),
  budgets: z.record(z.string(), Entry),
  reservations: z.array(
    z.strictObject({
      id: z.number().int(),
      split: z.string(),
      n: z.number().int(),
      commit: z.string(),
      at: z.string(),
      /** The client's id for the request: a re-sent request (same id, same evaluation) is not charged again. */
      request_id: z.string().optional(),
      /** The sample ids of the reservation (`0,1,4`), what a re-sent request must match. */
      samples: z.string().optional(),
    }),
  ),
  /** Cases an early-stopped evaluation reserved and did not run, given back to the sample budget (once per key). */
  refunds: z.array(LedgerRefund).optional(),
});
type LedgerFile = z.infer<typeof LedgerFile>;
export type BudgetEntry = z.infer<typeof Entry>;

/**
 * Where a ledger disagrees with the build's budgets (empty: it agrees). The build is the authority: each split's
 * totals and per-run cap are the build's, and what is left is the total less what the ledger's reservations
 * spent, so a ledger edited to hold more (its digest updated too) is refused, never trusted.
 */
export function ledgerProblems(ledger: LedgerFile, budgets: ServeConfig['budgets']): string[] {
  const out: string[] = [];
  const built = new Map(budgets.map((b) => [b.split, b]));
  for (const split of Object.keys(ledger.budgets)) if (!built.has(split)) out.push(`split "${split}" has no budget in this build`);
  for (const [split, b] of built) {
    const e = ledger.budgets[split];
    if (!e) {
      out.push(`split "${split}" is missing`);
      continue;
    }
    const mine = ledger.reservations.filter((r) => r.split === split);
    const want = entryOf(b, mine.length, mine.reduce((n, r) => n + r.n, 0) - refundedOf(ledger, split));
    for (const k of Object.keys(want) as (keyof BudgetEntry)[])
      if (e[k] !== want[k]) out.push(`${split}.${k} is ${e[k]}, the build and the reservations make it ${want[k]}`);
    if (mine.some((r) => r.n < 1 || (b.max_samples_per_run !== undefined && r.n > b.max_samples_per_run)))
      out.push(`split "${split}" has a reservation of a sample count the build does not allow`);
  }
  return out;
}

/** A split's ledger entry: the build's budget less `runs` runs and `samples` samples spent. */
const entryOf = (b: ServeConfig['budgets'][number], runs = 0, samples = 0): BudgetEntry => ({
  total_run_budget: b.total_run_budget ?? null,
  remaining_run_budget: b.total_run_budget === undefined ? null : b.total_run_budget - runs,
  total_sample_budget: b.total_sample_budget ?? null,
  remaining_sample_budget: b.total_sample_budget === undefined ? null : b.total_sample_budget - samples,
  max_samples_per_run: b.max_samples_per_run ?? null,
});

/** Samples given back to a split's budget by early-stopped evaluations. */
const refundedOf = (ledger: LedgerFile, split: string): number =>
  (ledger.refunds ?? []).filter((r) => r.split === split).reduce((n, r) => n + r.n, 0);

export class Ledger {
  private readonly mutex = new Mutex();
  private constructor(
    private readonly file: string,
    private state: LedgerFile,
  ) {}

  /** Loads the ledger, or creates it from the configured budgets on first start. */
  static open(file: string, budgets: ServeConfig['budgets']): Ledger {
    if (fs.existsSync(file)) {
      let parsed: LedgerFile;
      try {
        parsed = LedgerFile.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
      } catch (e) {
        throw new LedgerCorruptError(
          `budget ledger ${file} is unreadable or invalid (${(e as Error).message.split('\n')[0]}); refusing to start rather than refill the budget`,
        );
      }
      const problems = ledgerProblems(parsed, budgets);
      if (problems.length)
        throw new LedgerCorruptError(
          `budget ledger ${file} does not match this build's budgets (${problems.join('; ')}); refusing to start rather than trust it`,
        );
      return new Ledger(file, parsed);
    }
    const state: LedgerFile = {
      schema_version: 1,
      budgets: Object.fromEntries(budgets.map((b) => [b.split, entryOf(b)])),
      reservations: [],
    };
    writeJsonDurable(file, state, { mode: 0o600 });
    return new Ledger(file, state);
  }

  /** The refund an early-stopped evaluation's key was given (null: none). */
  refundOf(key: string): LedgerRefund | null {
    return structuredClone((this.state.refunds ?? []).find((r) => r.key === key) ?? null);
  }

  remaining(split: string): BudgetEntry | null {
    return this.state.budgets[split] ?? null;
  }

  /**
   * Reserves one run of `n` samples, or throws without spending anything. With a request id, a request that
   * was already reserved (same split, commit and samples) is not charged again (`replayed`); the same id for a
   * different evaluation is refused, so re-sending can only ever return the evaluation that was paid for.
   */
  reserve(
    split: string,
    n: number,
    commit: string,
    request?: { id: string; samples: string },
  ): Promise<BudgetEntry & { replayed?: boolean }> {
    return this.mutex.run(() => {
      if (request) {
        const prev = this.state.reservations.find((r) => r.request_id === request.id);
        if (prev) {
          if (prev.split !== split || prev.commit !== commit || prev.samples !== request.samples)
            throw conflict(`request_id "${request.id}" was already used for a different evaluation`);
          return { ...structuredClone(this.state.budgets[split]!), replayed: true };
        }
      }
      const b = this.state.budgets[split];
      if (!b) throw notEvaluable(`split "${split}" has no eval budget: it is not evaluable`);
      if (b.remaining_run_budget !== null && b.remaining_run_budget < 1)
        throw budgetExceeded(`run budget of split "${split}" is exhausted`);
      if (b.remaining_sample_budget !== null && b.remaining_sample_budget < n) {
        throw budgetExceeded(`split "${split}": ${n} sample(s) requested, ${b.remaining_sample_budget} left in the sample budget`);
      }
      if (b.max_samples_per_run !== null && n > b.max_samples_per_run)
        throw budgetExceeded(`split "${split}": at most ${b.max_samples_per_run} sample(s) per run, ${n} requested`);
      const next = structuredClone(this.state);
      const e = next.budgets[split]!;
      if (e.remaining_run_budget !== null) e.remaining_run_budget -= 1;
      if (e.remaining_sample_budget !== null) e.remaining_sample_budget -= n;
      next.reservations.push({
        id: next.reservations.length + 1,
        split,
        n,
        commit,
        at: new Date().toISOString(),
        ...(request ? { request_id: request.id, samples: request.samples } : {}),
      });
      writeJsonDurable(this.file, next, { mode: 0o600 }); // durable before the evaluation starts
      this.state = next;
      return structuredClone(e);
    });
  }

  /**
   * Gives `n` reserved samples of `split` back (an early-stopped evaluation's unrun cases), durably and once per
   * `key`: a second call with the same key changes nothing. The run stays spent (the evaluation ran).
   */
  refund(key: string, split: string, n: number, why: string): Promise<BudgetEntry> {
    return this.mutex.run(() => {
      if (n < 1 || (this.state.refunds ?? []).some((r) => r.key === key)) return structuredClone(this.state.budgets[split]!);
      const next = structuredClone(this.state);
      const e = next.budgets[split];
      if (!e) throw notEvaluable(`split "${split}" has no eval budget`);
      if (e.remaining_sample_budget !== null) e.remaining_sample_budget += n;
      next.refunds = [...(next.refunds ?? []), { key, split, n, at: new Date().toISOString(), why }];
      writeJsonDurable(this.file, next, { mode: 0o600 });
      this.state = next;
      return structuredClone(e);
    });
  }
}
