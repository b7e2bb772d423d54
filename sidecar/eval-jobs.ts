/**
 * The optimizer's evaluations as jobs (`POST /eval/jobs`, `GET /eval/jobs/:id`): a job is started once its
 * reservation is made (a refusal is still answered at once), runs in the sidecar however often it is waited on,
 * and is recorded on the admin volume at each change, so a restarted sidecar answers for it (and resumes one
 * that was running: the reservation replays, nothing is charged again, the workflow is attached to).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { writeJsonDurable } from '../infra/atomic-file';
import { SidecarError } from './errors';

const JOB_STATUSES = ['running', 'complete', 'failed', 'cancelled'] as const;

/** What a job needs to be run again after a restart (it was admitted: its reservation is in the ledger). */
export const AdmittedEval = z.strictObject({
  request_id: z.string(),
  split: z.string(),
  commit: z.string(),
  ids: z.array(z.number().int()),
  full: z.boolean(),
  access: z.enum(['viewable', 'non_viewable', 'no_access']),
  budget_remaining: z.unknown(),
});
export type AdmittedEval = z.infer<typeof AdmittedEval>;

export const JobRecord = z.strictObject({
  job_id: z.string(),
  status: z.enum(JOB_STATUSES),
  split: z.string(),
  commit: z.string(),
  n_samples: z.number().int(),
  started_at: z.string(),
  finished_at: z.string().optional(),
  /** The evaluation's answer (`POST /eval`'s), once complete. */
  result: z.unknown().optional(),
  /** Why it failed or was cancelled. */
  error: z.string().optional(),
  admitted: AdmittedEval,
});
export type JobRecord = z.infer<typeof JobRecord>;

/** What `GET /eval/jobs/:id` answers: the record (without its admission), its age, and progress while running. */
export type JobView = Omit<JobRecord, 'admitted'> & { elapsed_sec: number; progress?: unknown };

export const notFound = (m: string) => new SidecarError(404, m);

export class EvalJobStore {
  private readonly dir: string;
  private readonly jobs = new Map<string, JobRecord>();

  constructor(adminVolume: string) {
    this.dir = path.join(adminVolume, 'eval-jobs');
  }

  /** The job, from memory or as a restarted sidecar finds it on disk; undefined when there is none. */
  get(id: string): JobRecord | undefined {
    const known = this.jobs.get(id);
    if (known) return known;
    if (!/^[A-Za-z0-9_-]{8,128}$/.test(id)) return undefined;
    const file = path.join(this.dir, `${id}.json`);
    if (!fs.existsSync(file)) return undefined;
    const rec = JobRecord.parse(JSON.parse(fs.readFileSync(file, 'utf8')));
    this.jobs.set(id, rec);
    return rec;
  }

  /** Records a change, durably (temp file, fsync, rename). */
  put(rec: JobRecord): void {
    writeJsonDurable(path.join(this.dir, `${rec.job_id}.json`), rec, { mode: 0o600 });
    this.jobs.set(rec.job_id, rec);
  }

  static view(rec: JobRecord, progress?: unknown): JobView {
    const { admitted: _admitted, ...rest } = rec;
    const end = rec.finished_at ? Date.parse(rec.finished_at) : Date.now();
    return {
      ...rest,
      elapsed_sec: Math.max(0, Math.round((end - Date.parse(rec.started_at)) / 1000)),
      ...(progress !== undefined && rec.status === 'running' ? { progress } : {}),
    };
  }
}
