/** What was evaluated, with which score: persisted, so a restart keeps the candidates auto_best chooses from. */
import * as fs from 'node:fs';
import { z } from 'zod';
import { Mutex, writeJsonDurable } from '../infra/atomic-file';
import { InfrastructureError } from '../model/errors';
import { StopVerdict } from './early-stop-store';

const EvalRecordSchema = z.strictObject({
  commit: z.string(),
  split: z.string(),
  n_samples: z.number().int(),
  full_split: z.boolean(),
  mean_score: z.number(),
  n_errors: z.number().int(),
  admin: z.boolean(),
  /** The request that produced it (a re-sent request is recorded once). */
  request_id: z.string().optional(),
  /** Not a score of the candidate (e.g. its model budget ran out): never shortlisted. */
  invalid: z.string().optional(),
  /** Starved, dead and unmeasured attempts (model/evaluation/attempt-health.ts); absent in records made before it. */
  attempt_health: z
    .looseObject({ n_attempts: z.number(), unmeasured_attempt_rate: z.number(), deflation_factor: z.number().nullable() })
    .optional(),
  /** The objective's constraints the evaluation broke: never shortlisted. */
  violations: z.array(z.string()).optional(),
  /** eval_early_stop: where and why the evaluation stopped, or that it ran every case (sidecar/early-stop-run.ts). */
  early_stop: StopVerdict.optional(),
  seq: z.number().int(),
  evaluated_at: z.string(),
});
export type EvalRecord = z.infer<typeof EvalRecordSchema>;
export const RegistryFileSchema = z.strictObject({ schema_version: z.literal(1), records: z.array(EvalRecordSchema) });

export class CandidateRegistry {
  private readonly mutex = new Mutex();
  private constructor(
    private readonly file: string,
    private records: EvalRecord[],
  ) {}

  static open(file: string): CandidateRegistry {
    if (!fs.existsSync(file)) return new CandidateRegistry(file, []);
    try {
      return new CandidateRegistry(file, RegistryFileSchema.parse(JSON.parse(fs.readFileSync(file, 'utf8'))).records);
    } catch (e) {
      throw new InfrastructureError(`candidate registry ${file} is unreadable (${(e as Error).message.split('\n')[0]})`);
    }
  }

  add(r: Omit<EvalRecord, 'seq' | 'evaluated_at'>): Promise<void> {
    return this.mutex.run(() => {
      if (r.request_id && this.records.some((x) => x.request_id === r.request_id)) return;
      const next = [...this.records, { ...r, seq: this.records.length + 1, evaluated_at: new Date().toISOString() }];
      writeJsonDurable(this.file, { schema_version: 1, records: next }, { mode: 0o600 });
      this.records = next;
    });
  }

  list(): EvalRecord[] {
    return [...this.records];
  }
}
