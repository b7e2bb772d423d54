/**
 * The gateway's meter: what each scope, token and task has spent, durable. A request is charged when it is
 * admitted (its reservation is appended to the meter's log, and the request waits until that is on disk before it
 * goes upstream) and settled to its real usage when it ends. Writes are appended, batched and synced off the
 * event loop (meter-log.ts); a snapshot (`meter.json`) is written at start and when the log grows. A restart
 * settles every open reservation at its full amount, so a crash never refills a budget.
 */
import * as fs from 'node:fs';
import { z } from 'zod';
import { writeJsonDurable } from '../../infra/atomic-file';
import {
  admit,
  emptyUsage,
  GATEWAY_SCOPES,
  type Admission,
  type GatewayScope,
  type Reservation,
  type ScopePolicy,
  type ScopeUsage,
} from '../../model/gateway/policy';
import type { MeteredUsage } from '../../model/gateway/provider-usage';
import type { RequestBound } from '../../model/gateway/request-bound-type';
import { LedgerCorruptError } from '../../model/errors';
import { MeterLog } from './meter-log';

/** Task labels kept per token; the calls of any further task are counted under OVERFLOW_TASK. */
export const MAX_TASKS_PER_TOKEN = 1000;
export const OVERFLOW_TASK = '(other tasks)';
/** A stream cut off without a usage report is charged what it streamed (bytes bound tokens) plus this much. */
export const CUT_STREAM_MARGIN = 4096;
/** The log is folded into a new snapshot when it grows past this. */
const COMPACT_AT_BYTES = 4 << 20;

const Usage = z.strictObject({
  requests: z.number().int().min(0),
  input_tokens: z.number().min(0),
  cached_input_tokens: z.number().min(0),
  output_tokens: z.number().min(0),
  cost_usd: z.number().min(0),
  refused_budget: z.number().int().min(0),
  /** Absent in meters written before it existed. */
  refused_policy: z.number().int().min(0).default(0),
});
const Open = z.strictObject({
  scope: z.enum(GATEWAY_SCOPES),
  token: z.string(),
  input_tokens: z.number().min(0),
  output_tokens: z.number().min(0),
  /** The task the request was made for (a candidate's base URL names it), when known. */
  task: z.string().optional(),
});
const MeterFile = z.strictObject({
  schema_version: z.literal(1),
  /** The last log record folded into this snapshot (absent before the log existed). */
  seq: z.number().int().min(0).default(0),
  scopes: z.partialRecord(z.enum(GATEWAY_SCOPES), Usage),
  tokens: z.record(z.string(), Usage),
  /** Per token, per task (absent in meters written before it existed). */
  tasks: z.record(z.string(), z.record(z.string(), Usage)).default({}),
  open: z.record(z.string(), Open),
});
export type MeterFile = z.infer<typeof MeterFile>;
type OpenReservation = z.infer<typeof Open>;

/** One line of the meter's log. */
const LogRecord = z.discriminatedUnion('op', [
  z.strictObject({ seq: z.number().int(), op: z.literal('admit'), id: z.string(), r: Open }),
  z.strictObject({ seq: z.number().int(), op: z.literal('settle'), id: z.string(), charge: Usage.partial() }),
  z.strictObject({
    seq: z.number().int(),
    op: z.literal('refuse'),
    scope: z.enum(GATEWAY_SCOPES),
    token: z.string(),
    task: z.string().optional(),
    why: z.enum(['refused_budget', 'refused_policy']),
  }),
]);
type LogRecord = z.infer<typeof LogRecord>;
type Unsequenced<T> = T extends unknown ? Omit<T, 'seq'> : never;

/** How a request ended, for its settlement. */
export type Settlement =
  /** The upstream reported usage (missing fields are charged at the reservation). */
  | { kind: 'metered'; usage: MeteredUsage }
  /** The upstream answered with an error and no usage: nothing was generated. */
  | { kind: 'refused_upstream' }
  /**
   * A stream cut off (upstream reset or stalled, client gone) after `streamedBytes` bytes, with the usage it had
   * reported by then (Anthropic's input comes first): output is charged at most what was streamed plus a margin.
   */
  | { kind: 'cut'; usage: MeteredUsage | null; streamedBytes: number }
  /** The request failed in a way that may have cost tokens (a timeout without a stream): charge the reservation. */
  | { kind: 'unknown' };

function add(u: ScopeUsage, d: Partial<ScopeUsage>): void {
  for (const k of Object.keys(d) as (keyof ScopeUsage)[]) u[k] += d[k] ?? 0;
}

/** What a settlement charges a reservation. */
function chargeOf(r: Reservation, how: Settlement): Partial<ScopeUsage> {
  if (how.kind === 'refused_upstream') return {};
  if (how.kind === 'unknown') return { input_tokens: r.input_tokens, output_tokens: r.output_tokens };
  if (how.kind === 'cut')
    return {
      input_tokens: how.usage?.input_tokens ?? r.input_tokens,
      cached_input_tokens: how.usage?.cached_input_tokens ?? 0,
      output_tokens: Math.max(how.usage?.output_tokens ?? 0, Math.min(r.output_tokens, how.streamedBytes + CUT_STREAM_MARGIN)),
    };
  return {
    input_tokens: how.usage.input_tokens ?? r.input_tokens,
    cached_input_tokens: how.usage.cached_input_tokens ?? 0,
    output_tokens: how.usage.output_tokens ?? r.output_tokens,
    cost_usd: how.usage.cost_usd ?? 0,
  };
}

export class Meter {
  private readonly inFlight = new Map<GatewayScope, number>();
  private ids = 0;

  private constructor(
    private readonly state: MeterFile,
    private readonly log: MeterLog,
  ) {}

  /** Reads the snapshot and replays the log after it; charges what was in flight in full; starts a new log. */
  static open(file: string): Meter {
    const state = Meter.load(file);
    const logFile = `${file}.log`;
    const meter = new Meter(state, MeterLog.closed());
    // Requests that were in flight when the sidecar stopped: charged in full, never forgotten.
    for (const [id, r] of Object.entries(state.open)) meter.closeReservation(id, r, chargeOf(r, { kind: 'unknown' }));
    writeJsonDurable(file, state, { mode: 0o600 });
    const log = MeterLog.start(
      logFile,
      state.seq,
      COMPACT_AT_BYTES,
      (seq) => {
        state.seq = seq;
        return JSON.stringify(state);
      },
      file,
    );
    return new Meter(state, log);
  }

  /** The snapshot with its log replayed (nothing written): what a restarted or resumed gateway starts from. */
  static load(file: string): MeterFile {
    let state: MeterFile = { schema_version: 1, seq: 0, scopes: {}, tokens: {}, tasks: {}, open: {} };
    try {
      if (fs.existsSync(file)) state = MeterFile.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
      const replay = new Meter(state, MeterLog.closed());
      for (const rec of MeterLog.read(`${file}.log`)) if (rec.seq > state.seq) replay.apply(LogRecord.parse(rec));
    } catch (e) {
      throw new LedgerCorruptError(
        `${file}: the gateway's meter cannot be read (${(e as Error).message.split('\n')[0]}); refusing to guess what was spent`,
      );
    }
    return state;
  }

  /** Spent plus reserved by requests in flight: what admission compares with the limits. */
  committed(scope: GatewayScope): ScopeUsage {
    const u = { ...(this.state.scopes[scope] ?? emptyUsage()) };
    for (const r of Object.values(this.state.open))
      if (r.scope === scope) add(u, { input_tokens: r.input_tokens, output_tokens: r.output_tokens });
    return u;
  }

  usage(scope: GatewayScope): ScopeUsage {
    return { ...emptyUsage(), ...this.state.scopes[scope] };
  }

  tokenUsage(token: string): ScopeUsage {
    return { ...emptyUsage(), ...this.state.tokens[token] };
  }

  /** A token's usage per task (the tasks its requests named; past MAX_TASKS_PER_TOKEN, OVERFLOW_TASK). */
  taskUsage(token: string): Record<string, ScopeUsage> {
    return Object.fromEntries(Object.entries(this.state.tasks[token] ?? {}).map(([t, u]) => [t, { ...u }]));
  }

  /**
   * Admits a request and reserves its worst case, or refuses it (a budget refusal is counted, against the scope,
   * the token and the task). Synchronous: two requests cannot both take the last of a budget. An admitted
   * request must await `durable` (its reservation on disk) before it goes upstream.
   */
  admit(
    scope: GatewayScope,
    token: string,
    policy: ScopePolicy,
    bound: RequestBound,
    askedOutput: number | null,
    task?: string,
  ): Admission & { reservationId?: string; durable?: Promise<void> } {
    const decision = admit(policy, this.committed(scope), this.inFlight.get(scope) ?? 0, bound, askedOutput);
    if (!decision.ok) {
      if (decision.kind === 'budget') this.refused(scope, token, task, 'refused_budget');
      if (decision.kind === 'unbounded') this.refused(scope, token, task, 'refused_policy');
      return decision;
    }
    const id = `${Date.now().toString(36)}-${process.pid}-${++this.ids}`;
    const label = task === undefined ? undefined : this.labelOf(token, task);
    const durable = this.record({ op: 'admit', id, r: { scope, token, ...decision.reserve, ...(label ? { task: label } : {}) } });
    this.inFlight.set(scope, (this.inFlight.get(scope) ?? 0) + 1);
    return { ...decision, reservationId: id, durable };
  }

  /** Counts a request the gateway refused (after authenticating it) against its scope, token and task. */
  refused(scope: GatewayScope, token: string, task: string | undefined, why: 'refused_budget' | 'refused_policy'): void {
    const label = task === undefined ? undefined : this.labelOf(token, task);
    void this.record({ op: 'refuse', scope, token, ...(label ? { task: label } : {}), why }).catch(() => undefined);
  }

  /** Replaces a reservation with what the request really cost. */
  settle(id: string, how: Settlement): void {
    const r = this.state.open[id];
    if (!r) return;
    this.inFlight.set(r.scope, Math.max(0, (this.inFlight.get(r.scope) ?? 1) - 1));
    void this.record({ op: 'settle', id, charge: chargeOf(r, how) }).catch(() => undefined);
  }

  /** Waits for every record so far to be on disk. */
  flush(): Promise<void> {
    return this.log.flush();
  }

  async close(): Promise<void> {
    await this.log.close();
  }

  /** Applies a record to the state now, and appends it to the log (the promise: when it is on disk). */
  private record(rec: Unsequenced<LogRecord>): Promise<void> {
    const seq = this.log.nextSeq();
    const full = { ...rec, seq } as LogRecord;
    this.apply(full);
    return this.log.append(full);
  }

  private apply(rec: LogRecord): void {
    this.state.seq = Math.max(this.state.seq, rec.seq);
    if (rec.op === 'admit') {
      this.state.open[rec.id] = rec.r;
      this.bucket(rec.r.scope, rec.r.token, rec.r.task).forEach((u) => add(u, { requests: 1 }));
    } else if (rec.op === 'settle') {
      const r = this.state.open[rec.id];
      if (r) this.closeReservation(rec.id, r, rec.charge);
    } else this.bucket(rec.scope, rec.token, rec.task).forEach((u) => add(u, { [rec.why]: 1 }));
  }

  private closeReservation(id: string, r: OpenReservation, charge: Partial<ScopeUsage>): void {
    delete this.state.open[id];
    this.bucket(r.scope, r.token, r.task).forEach((u) => add(u, charge));
  }

  /** The label a task's usage is kept under: its name, or OVERFLOW_TASK once the token has MAX_TASKS_PER_TOKEN. */
  private labelOf(token: string, task: string): string {
    const perTask = this.state.tasks[token] ?? {};
    return perTask[task] || Object.keys(perTask).length < MAX_TASKS_PER_TOKEN ? task : OVERFLOW_TASK;
  }

  private bucket(scope: GatewayScope, token: string, task?: string): ScopeUsage[] {
    this.state.scopes[scope] ??= emptyUsage();
    this.state.tokens[token] ??= emptyUsage();
    const buckets = [this.state.scopes[scope], this.state.tokens[token]];
    if (task) {
      const perTask = (this.state.tasks[token] ??= {});
      buckets.push((perTask[task] ??= emptyUsage()));
    }
    return buckets;
  }
}
