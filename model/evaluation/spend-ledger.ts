/**
 * The arithmetic of metering spend (workflows/spend-meter.ts and workflows/spend-pool.ts run the protocol: the
 * signals, who is told what and when): an evaluation's total, a spend pool's total over its members with each
 * member's share, each task counted once however often it is reported (spendToAdd), and the cap it reached.
 * Pure: each method changes the ledger's own counts only.
 */
import { addSpend, capReached, NO_SPEND, type Spend, type SpendCap, spendToAdd, type TaskSpend } from './spend-cap';

/** One run of a capped evaluation: what its finished tasks spent (over every run: `carried` from the one before). */
export class SpendTotal {
  /** Each task's total counted so far in this run: a task reported again (after a reset) is counted once. */
  private readonly counted: Record<string, Spend> = {};

  constructor(public spent: Spend = NO_SPEND) {}

  add(report: TaskSpend): void {
    this.spent = addSpend(this.spent, spendToAdd(this.counted, report));
  }

  /** The cap the total reached, in words, or null. */
  reachedOf(cap: SpendCap): string | null {
    return capReached(cap, this.spent);
  }
}

/** A spend pool's counts, as one run hands them to the next when the pool continues as new. */
export interface PoolCounts {
  spent: Spend;
  reached: string | null;
  members: string[];
  spentBy: Record<string, { costUsd: number; tokens: number }>;
  /** Each running member's tasks' totals counted so far (absent in histories recorded before). */
  counted?: Record<string, Record<string, Spend>>;
}

/** A spend pool's ledger: its members, what they spent together and each, and the cap that total reached. */
export class PoolLedger {
  spent: Spend;
  reached: string | null;
  readonly members: Set<string>;
  readonly spentBy: PoolCounts['spentBy'];
  /** A member's task totals, so a report that comes again (the member was reset) counts once; dropped once it leaves. */
  private readonly counted: NonNullable<PoolCounts['counted']>;

  constructor(
    private readonly cap: SpendCap,
    carried?: PoolCounts,
  ) {
    this.spent = carried?.spent ?? NO_SPEND;
    this.reached = carried?.reached ?? null;
    this.members = new Set(carried?.members ?? []);
    this.spentBy = { ...(carried?.spentBy ?? {}) };
    this.counted = { ...(carried?.counted ?? {}) };
  }

  join(evalId: string): void {
    this.members.add(evalId);
    this.spentBy[evalId] ??= { costUsd: 0, tokens: 0 };
  }

  leave(evalId: string): void {
    this.members.delete(evalId);
    delete this.counted[evalId];
  }

  /** A member's finished task (a non-member's counts in full); true when it is the spend that reached the cap. */
  add(evalId: string, report: TaskSpend): boolean {
    const added = spendToAdd(this.members.has(evalId) ? (this.counted[evalId] ??= {}) : {}, report);
    this.spent = addSpend(this.spent, added);
    const mine = this.spentBy[evalId] ?? { costUsd: 0, tokens: 0 };
    this.spentBy[evalId] = { costUsd: mine.costUsd + added.costUsd, tokens: mine.tokens + added.tokens };
    if (this.reached !== null) return false;
    this.reached = capReached(this.cap, this.spent);
    return this.reached !== null;
  }

  /** The pool can close: its cap was reached and no member runs. */
  get closable(): boolean {
    return this.reached !== null && this.members.size === 0;
  }

  counts(): Required<PoolCounts> {
    return { spent: this.spent, reached: this.reached, members: [...this.members], spentBy: this.spentBy, counted: this.counted };
  }
}
