/**
 * The gateway's meter: what each scope and each token has spent, durable. A request is charged when it is
 * admitted (its reservation is written before it goes upstream) and settled to its real usage when it ends; a
 * restart settles every open reservation at its full amount, so a crash never refills a budget.
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
  type ScopePolicy,
  type ScopeUsage,
} from '../../model/gateway-policy';
import type { MeteredUsage } from '../../model/provider-usage';
import { LedgerCorruptError } from '../ledger';

const Usage = z.strictObject({
  requests: z.number().int().min(0),
  input_tokens: z.number().min(0),
  cached_input_tokens: z.number().min(0),
  output_tokens: z.number().min(0),
  cost_usd: z.number().min(0),
  refused_budget: z.number().int().min(0),
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
  scopes: z.partialRecord(z.enum(GATEWAY_SCOPES), Usage),
  tokens: z.record(z.string(), Usage),
  /** Per token, per task (absent in meters written before it existed). */
  tasks: z.record(z.string(), z.record(z.string(), Usage)).default({}),
  open: z.record(z.string(), Open),
});
type MeterFile = z.infer<typeof MeterFile>;
type OpenReservation = z.infer<typeof Open>;

/** How a request ended, for its settlement. */
export type Settlement =
  /** The upstream reported usage (missing fields are charged at the reservation). */
  | { kind: 'metered'; usage: MeteredUsage }
  /** The upstream answered with an error and no usage: nothing was generated. */
  | { kind: 'refused_upstream' }
  /** The request failed in a way that may have cost tokens (a stream cut off, a timeout): charge the reservation. */
  | { kind: 'unknown' };

function add(u: ScopeUsage, d: Partial<ScopeUsage>): void {
  for (const k of Object.keys(d) as (keyof ScopeUsage)[]) u[k] += d[k] ?? 0;
}

export class Meter {
  private readonly inFlight = new Map<GatewayScope, number>();
  private seq = 0;

  private constructor(
    private readonly file: string,
    private readonly state: MeterFile,
  ) {}

  static open(file: string): Meter {
    let state: MeterFile = { schema_version: 1, scopes: {}, tokens: {}, tasks: {}, open: {} };
    if (fs.existsSync(file)) {
      try {
        state = MeterFile.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
      } catch (e) {
        throw new LedgerCorruptError(
          `${file}: the gateway's meter cannot be read (${(e as Error).message.split('\n')[0]}); refusing to guess what was spent`,
        );
      }
    }
    const meter = new Meter(file, state);
    // Requests that were in flight when the sidecar stopped: charged in full, never forgotten.
    for (const [id, r] of Object.entries(state.open)) meter.close(id, r, { input_tokens: r.input_tokens, output_tokens: r.output_tokens });
    meter.save();
    return meter;
  }

  /** Spent plus reserved by requests in flight: what admission compares with the limits. */
  committed(scope: GatewayScope): ScopeUsage {
    const u = { ...(this.state.scopes[scope] ?? emptyUsage()) };
    for (const r of Object.values(this.state.open))
      if (r.scope === scope) add(u, { input_tokens: r.input_tokens, output_tokens: r.output_tokens });
    return u;
  }

  usage(scope: GatewayScope): ScopeUsage {
    return { ...(this.state.scopes[scope] ?? emptyUsage()) };
  }

  tokenUsage(token: string): ScopeUsage {
    return { ...(this.state.tokens[token] ?? emptyUsage()) };
  }

  /** A token's usage per task (the tasks its requests named). */
  taskUsage(token: string): Record<string, ScopeUsage> {
    return Object.fromEntries(Object.entries(this.state.tasks[token] ?? {}).map(([t, u]) => [t, { ...u }]));
  }

  /**
   * Admits a request and durably reserves its worst case, or refuses it (a budget refusal is counted, against
   * the scope and the token). Synchronous: two requests cannot both take the last of a budget.
   */
  admit(
    scope: GatewayScope,
    token: string,
    policy: ScopePolicy,
    bodyBytes: number,
    askedOutput: number | null,
    task?: string,
  ): Admission & { reservationId?: string } {
    const decision = admit(policy, this.committed(scope), this.inFlight.get(scope) ?? 0, bodyBytes, askedOutput);
    if (!decision.ok) {
      if (decision.kind === 'budget') {
        this.bucket(scope, token, task).forEach((u) => add(u, { refused_budget: 1 }));
        this.save();
      }
      return decision;
    }
    const id = `${Date.now().toString(36)}-${process.pid}-${++this.seq}`;
    this.state.open[id] = { scope, token, input_tokens: bodyBytes, output_tokens: decision.outputCap ?? 0, ...(task ? { task } : {}) };
    this.bucket(scope, token, task).forEach((u) => add(u, { requests: 1 }));
    this.inFlight.set(scope, (this.inFlight.get(scope) ?? 0) + 1);
    this.save();
    return { ...decision, reservationId: id };
  }

  /** Replaces a reservation with what the request really cost. */
  settle(id: string, how: Settlement): void {
    const r = this.state.open[id];
    if (!r) return;
    this.inFlight.set(r.scope, Math.max(0, (this.inFlight.get(r.scope) ?? 1) - 1));
    if (how.kind === 'refused_upstream') this.close(id, r, {});
    else if (how.kind === 'unknown') this.close(id, r, { input_tokens: r.input_tokens, output_tokens: r.output_tokens });
    else
      this.close(id, r, {
        input_tokens: how.usage.input_tokens ?? r.input_tokens,
        cached_input_tokens: how.usage.cached_input_tokens ?? 0,
        output_tokens: how.usage.output_tokens ?? r.output_tokens,
        cost_usd: how.usage.cost_usd ?? 0,
      });
    this.save();
  }

  private close(id: string, r: OpenReservation, charge: Partial<ScopeUsage>): void {
    delete this.state.open[id];
    this.bucket(r.scope, r.token, r.task).forEach((u) => add(u, charge));
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

  private save(): void {
    writeJsonDurable(this.file, this.state, { mode: 0o600 });
  }
}
