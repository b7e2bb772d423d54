/**
 * One page of a trial's ATIF trajectory (model/harbor/atif-trajectory.ts), read as the file streams: the steps before the
 * page are validated and dropped, the page's are kept, and reading stops once the page is full, so the first page
 * of a 50 MB trajectory answers without the file ever being one string. A file that is not JSON, or not ATIF, is
 * returned as its first bytes with the reason, for the viewer to show raw.
 */
import * as fs from 'node:fs';
import { JSONParser } from '@streamparser/json';
import { z } from 'zod';
import { openHomeFile } from '../infra/home-file';
import {
  AgentInfo,
  FinalMetrics,
  issueText,
  readStep,
  REQUIRED_TRAJECTORY_FIELDS,
  Step,
  TRAJECTORY_HEAD_FIELDS,
} from '../model/harbor/atif-trajectory';

interface TrajectoryHead {
  schemaVersion: string;
  sessionId: string | null;
  agent: AgentInfo;
  notes: string | null;
  /** Known once the file was read to its end (Harbor writes them after the steps). */
  finalMetrics: FinalMetrics | null;
}

export type TrajectoryPage =
  | {
      ok: true;
      head: TrajectoryHead;
      /** The page's steps; the first is step number `offset + 1`. */
      steps: Step[];
      offset: number;
      /** The number of steps, when the file was read to its end (else null: there are more). */
      totalSteps: number | null;
      size: number;
    }
  | { ok: false; status: 403 | 404; reason: string }
  | { ok: false; status: 200; reason: string; raw: string; size: number; rawTruncated: boolean };

/** The most of a trajectory shown raw when it does not parse. */
const MAX_RAW_BYTES = 256 * 1024;
const CHUNK_BYTES = 256 * 1024;

const HEAD_KEYS = Object.keys(TRAJECTORY_HEAD_FIELDS) as (keyof typeof TRAJECTORY_HEAD_FIELDS)[];

class NotAtif extends Error {}

/** What the parser collects: the head fields seen, the page's steps, how many steps went by. */
interface Reading {
  head: Record<string, unknown>;
  steps: Step[];
  seen: number;
  stepsPresent: boolean;
}

function onStep(r: Reading, value: unknown, index: number, offset: number, limit: number): void {
  const s = readStep(value, index);
  if ('problem' in s) throw new NotAtif(s.problem);
  r.seen = index + 1;
  if (index >= offset && index < offset + limit) r.steps.push(s.step);
}

function parserFor(r: Reading, offset: number, limit: number): JSONParser {
  const parser = new JSONParser({ paths: [...HEAD_KEYS.map((k) => `$.${k}`), '$.steps', '$.steps.*'], keepStack: false });
  parser.onValue = ({ value, key, stack }) => {
    if (stack.length === 2 && typeof key === 'number') return onStep(r, value, key, offset, limit);
    if (stack.length !== 1 || typeof key !== 'string') return;
    if (key === 'steps') {
      if (!Array.isArray(value)) throw new NotAtif('steps: expected an array');
      r.stepsPresent = true;
      return;
    }
    const field = TRAJECTORY_HEAD_FIELDS[key as keyof typeof TRAJECTORY_HEAD_FIELDS] as z.ZodType;
    const parsed = field.safeParse(value);
    if (!parsed.success) throw new NotAtif(`${key}: ${issueText(parsed.error)}`);
    r.head[key] = parsed.data;
  };
  return parser;
}

function headOf(r: Reading, complete: boolean): TrajectoryHead {
  const h = r.head;
  return {
    schemaVersion: (h.schema_version as string | undefined) ?? 'ATIF-v1.8',
    sessionId: (h.session_id as string | null | undefined) ?? null,
    agent: h.agent as AgentInfo,
    notes: (h.notes as string | null | undefined) ?? null,
    finalMetrics: complete ? ((h.final_metrics as FinalMetrics | null | undefined) ?? null) : null,
  };
}

function missingFields(r: Reading): string[] {
  return REQUIRED_TRAJECTORY_FIELDS.filter((f) => (f === 'steps' ? !r.stepsPresent : r.head[f] === undefined));
}

/** Reads steps `offset` … `offset + limit - 1` of the trajectory at `rel` (relative to the home). */
export async function trajectoryPage(
  home: string,
  rel: string,
  allowed: (rel: string) => boolean,
  offset: number,
  limit: number,
): Promise<TrajectoryPage> {
  const opened = openHomeFile(home, rel, allowed);
  if (!opened.ok) return opened;
  const r: Reading = { head: {}, steps: [], seen: 0, stepsPresent: false };
  const parser = parserFor(r, offset, limit);
  const stream = fs.createReadStream('', { fd: opened.fd, highWaterMark: CHUNK_BYTES, autoClose: true });
  let complete = true;
  try {
    for await (const chunk of stream) {
      parser.write(chunk as Buffer);
      if (r.seen > offset + limit && r.head.agent !== undefined) {
        complete = false; // the page is full and there are more steps: stop reading
        break;
      }
    }
    if (complete && !parser.isEnded) parser.end();
  } catch (e) {
    const reason = e instanceof NotAtif ? `not an ATIF trajectory: ${e.message}` : `not JSON: ${(e as Error).message}`;
    return rawOf(home, rel, allowed, reason);
  } finally {
    stream.destroy();
  }
  const missing = complete ? missingFields(r) : [];
  if (missing.length) return rawOf(home, rel, allowed, `not an ATIF trajectory: no ${missing.map((m) => `\`${m}\``).join(', no ')}`);
  if (complete && r.seen === 0) return rawOf(home, rel, allowed, 'not an ATIF trajectory: steps: expected at least 1 step');
  return {
    ok: true,
    head: headOf(r, complete),
    steps: r.steps.slice(0, limit),
    offset,
    totalSteps: complete ? r.seen : null,
    size: opened.size,
  };
}

/** The first MAX_RAW_BYTES of a trajectory that does not parse, with the reason. */
function rawOf(home: string, rel: string, allowed: (rel: string) => boolean, reason: string): TrajectoryPage {
  const opened = openHomeFile(home, rel, allowed);
  if (!opened.ok) return opened;
  try {
    const buf = Buffer.alloc(Math.min(opened.size, MAX_RAW_BYTES));
    const n = fs.readSync(opened.fd, buf, 0, buf.length, 0);
    return { ok: false, status: 200, reason, raw: buf.subarray(0, n).toString('utf8'), size: opened.size, rawTruncated: opened.size > n };
  } finally {
    fs.closeSync(opened.fd);
  }
}
