/**
 * One trial as `vero view` shows it: its result (rewards, exception, tokens and cost), the verifier's output beside
 * it, and a page of its ATIF trajectory (client/trajectory-page.ts). Every file is read through the viewer's
 * checks (isLinkedFile, the real path inside the home) and bounded.
 */
import { TrialResult } from '../model/harbor/schemas';
import { readHomeFile } from '../infra/home-file';
import { trialFiles } from '../model/harbor/paths';
import { trajectoryPage, TrajectoryPage } from './trajectory-page';
import { isLinkedFile } from './view-data';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Steps per page of a trajectory. */
export const STEPS_PER_PAGE = 100;
/** The most of one verifier file shown beside the transcript. */
const MAX_VERIFIER_BYTES = 64 * 1024;
const MAX_VERIFIER_FILES = 8;

export interface VerifierOutput {
  name: string;
  rel: string;
  text: string;
  size: number;
  truncated: boolean;
}

export interface TrialDetail {
  /** The trial dir, relative to the home. */
  rel: string;
  trialName: string;
  task: string | null;
  rewards: Record<string, number> | null;
  exception: { type: string; message: string; traceback: string | null } | null;
  tokens: { input: number | null; cached: number | null; output: number | null; costUsd: number | null } | null;
  agent: string | null;
  model: string | null;
  /** Why result.json could not be read, when it could not. */
  resultProblem: string | null;
  verifier: VerifierOutput[];
  trajectory: TrajectoryPage;
  trajectoryRel: string;
}

function resultOf(home: string, rel: string): { result: TrialResult | null; problem: string | null } {
  const f = readHomeFile(home, trialFiles(rel).result, 4 * 1024 * 1024, isLinkedFile);
  if (!f.ok) return { result: null, problem: f.reason };
  if (f.truncated) return { result: null, problem: `result.json: larger than ${4 * 1024 * 1024} bytes` };
  let json: unknown;
  try {
    json = JSON.parse(f.content.toString('utf8'));
  } catch (e) {
    return { result: null, problem: `result.json: not JSON (${(e as Error).message})` };
  }
  const parsed = TrialResult.safeParse(json);
  return parsed.success
    ? { result: parsed.data, problem: null }
    : { result: null, problem: `result.json: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` };
}

function verifierOutputs(home: string, rel: string): VerifierOutput[] {
  const dir = trialFiles(path.join(fs.realpathSync(home), rel)).verifierDir;
  let names: string[];
  try {
    names = fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort((a, b) => Number(!/reward/.test(a)) - Number(!/reward/.test(b)) || a.localeCompare(b));
  } catch {
    return [];
  }
  return names.slice(0, MAX_VERIFIER_FILES).flatMap((name) => {
    const fileRel = `${trialFiles(rel).verifierDir}/${name}`;
    const f = readHomeFile(home, fileRel, MAX_VERIFIER_BYTES, isLinkedFile);
    return f.ok ? [{ name, rel: fileRel, text: f.content.toString('utf8'), size: f.size, truncated: f.truncated }] : [];
  });
}

function summaryOf(r: TrialResult | null): Pick<TrialDetail, 'task' | 'rewards' | 'exception' | 'tokens' | 'agent' | 'model'> {
  const a = r?.agent_result;
  const e = r?.exception_info;
  const info = r?.agent_info as { name?: string; model_info?: { name?: string; provider?: string | null } | null } | null | undefined;
  return {
    task: r?.task_name ?? null,
    rewards: (r?.verifier_result?.rewards as Record<string, number> | null | undefined) ?? null,
    exception: e ? { type: e.exception_type, message: e.exception_message ?? '', traceback: e.exception_traceback ?? null } : null,
    tokens: a
      ? {
          input: a.n_input_tokens ?? null,
          cached: a.n_cache_tokens ?? null,
          output: a.n_output_tokens ?? null,
          costUsd: a.cost_usd ?? null,
        }
      : null,
    agent: info?.name ?? null,
    model: info?.model_info ? [info.model_info.provider, info.model_info.name].filter(Boolean).join('/') : null,
  };
}

/** The trial at `rel` (a trial dir relative to the home) with page `page` (from 1) of its trajectory. */
export async function trialDetail(home: string, rel: string, page: number): Promise<TrialDetail> {
  const { result, problem } = resultOf(home, rel);
  const trajectoryRel = trialFiles(rel).trajectory;
  const offset = (Math.max(1, page) - 1) * STEPS_PER_PAGE;
  return {
    rel,
    trialName: path.basename(rel),
    ...summaryOf(result),
    resultProblem: problem,
    verifier: verifierOutputs(home, rel),
    trajectory: await trajectoryPage(home, trajectoryRel, isLinkedFile, offset, STEPS_PER_PAGE),
    trajectoryRel,
  };
}
