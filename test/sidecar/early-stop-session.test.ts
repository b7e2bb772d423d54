/**
 * Early stop across a relaunch, on the real ledger, the real early-stop records and the real snapshot and restore
 * (the waves are simulated outcomes): a session carries `early-stop/`, so the same request re-sent to the relaunched
 * sidecar is not charged and runs nothing, its verdict kept; a refund whose record is gone is refused (409) rather
 * than every case run at the refunded price.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { attemptHealth } from '../../model/evaluation/attempt-health';
import type { ServeConfig } from '../../model/compiled-task/serve-config';
import type { EvalOutcome } from '../../sidecar/engine';
import { evaluateAdmitted } from '../../sidecar/early-stop-eval';
import { EarlyStopStore } from '../../sidecar/early-stop-store';
import type { AdmittedEval } from '../../sidecar/eval-jobs';
import { Ledger } from '../../sidecar/ledger';
import { restoreSession, takeSnapshot } from '../../sidecar/session-snapshot';
import type { SidecarDeps } from '../../sidecar/sidecar-deps';
import { tempDir } from '../helpers/fixtures';

const SPLIT = 'validation';
const N = 12;
const BUDGETS = [{ split: SPLIT, total_run_budget: 10, total_sample_budget: 40 }];

/** A sidecar's state dirs and config (what snapshot and restore read), with the build's seal key and digest. */
function sidecarConfig(root: string, resumeDir?: string): ServeConfig {
  const p = (f: string) => path.join(root, f);
  for (const d of ['admin', 'agent', 'build']) fs.mkdirSync(p(d), { recursive: true });
  fs.writeFileSync(p('build/seal.key'), `${'5e'.repeat(32)}\n`);
  fs.writeFileSync(p('build/digest'), `${'d'.repeat(64)}\n`);
  return {
    task_name: 'demo/early-stop',
    base_commit: 'b'.repeat(40),
    budgets: BUDGETS,
    repo_path: p('no-repo'),
    mode: 'B',
    max_concurrency: 4,
    eval_early_stop: { confidence: 0.8, margin: 0, running: 'finish' },
    objective: { direction: 'maximize', failure_value: 0 },
    scoring: { error_rate_threshold: 1 },
    splits: [{ split: SPLIT, access: 'viewable' }],
    paths: {
      admin_volume: p('admin'),
      agent_volume: p('agent'),
      ledger_seal_key: p('build/seal.key'),
      build_digest: p('build/digest'),
      ...(resumeDir ? { resume_dir: resumeDir } : {}),
    },
  } as unknown as ServeConfig;
}

/** The sidecar's evaluation path (reserve as `POST /eval` does, then evaluateAdmitted); counts the cases run. */
async function post(cfg: ServeConfig, commit: string, requestId: string, scores: number[]) {
  const ledger = Ledger.open(path.join(cfg.paths.admin_volume, 'ledger.json'), cfg.budgets);
  const ids = scores.map((_, i) => i);
  const reserved = await ledger.reserve(SPLIT, ids.length, commit, { id: requestId, samples: ids.join(',') });
  let ran = 0;
  const engine = {
    evaluate: async (c: string, split: string, wave: number[]): Promise<EvalOutcome> => {
      ran += wave.length;
      const samples = wave.map((id) => ({ id, name: `case-${id}`, score: scores[id]!, error: null }));
      const meanScore = samples.reduce((a, s) => a + s.score, 0) / samples.length;
      return { commit: c, split, samples, meanScore, nErrors: 0, nInfraErrors: 0, fullSplit: false, health: attemptHealth([]) };
    },
    report: (): void => undefined, // the engine's listeners (W&B): none here
  };
  const a: AdmittedEval = { request_id: requestId, split: SPLIT, commit, ids, full: true, access: 'viewable', budget_remaining: null };
  const outcome = evaluateAdmitted({ cfg, engine, ledger } as unknown as SidecarDeps, a);
  return { outcome, replayed: reserved.replayed === true, ran: () => ran, ledger };
}

/** A session in which an incumbent ran every case and a worse candidate was early-stopped and refunded. */
async function stoppedSession(root: string) {
  const cfg = sidecarConfig(path.join(root, 'first'));
  const incumbent = await post(cfg, 'c'.repeat(40), 'incumbent-0001', Array<number>(N).fill(1));
  expect((await incumbent.outcome).verdict).toMatchObject({ stopped: false });
  const worse = await post(cfg, 'e'.repeat(40), 'worse-000001', Array<number>(N).fill(0));
  const { verdict } = await worse.outcome;
  expect(verdict).toMatchObject({ stopped: true });
  expect(worse.ledger.refundOf('worse-000001')).not.toBeNull();
  const session = path.join(root, 'session');
  const manifest = await takeSnapshot(cfg, session);
  return { session, manifest, verdict: verdict!, remaining: worse.ledger.remaining(SPLIT) };
}

/** A relaunched sidecar on fresh dirs, the session restored. */
async function relaunched(root: string, session: string): Promise<ServeConfig> {
  const cfg = sidecarConfig(path.join(root, 'relaunch'), session);
  expect(await restoreSession(cfg, () => undefined)).toBe(true);
  return cfg;
}

test('a relaunch keeps early stop: the re-sent stopped request is not charged, runs nothing and keeps its verdict', async () => {
  const root = tempDir('vero-early-stop-session-');
  try {
    const { session, manifest, verdict, remaining } = await stoppedSession(root);
    expect(Object.keys(manifest.files).filter((f) => f.startsWith('early-stop/')).length).toBeGreaterThanOrEqual(2);
    const cfg = await relaunched(root, session);
    const again = await post(cfg, 'e'.repeat(40), 'worse-000001', Array<number>(N).fill(0));
    expect(again.replayed).toBe(true);
    expect((await again.outcome).verdict).toEqual(verdict);
    expect(again.ran()).toBe(0);
    expect(again.ledger.remaining(SPLIT)).toEqual(remaining);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a refund whose early-stop record is gone is refused by name, not run again at the refunded price', async () => {
  const root = tempDir('vero-early-stop-session-');
  try {
    const { session, remaining } = await stoppedSession(root);
    const cfg = await relaunched(root, session);
    fs.rmSync(path.join(cfg.paths.admin_volume, 'early-stop', 'runs'), { recursive: true }); // the record lost
    const again = await post(cfg, 'e'.repeat(40), 'worse-000001', Array<number>(N).fill(0));
    await expect(again.outcome).rejects.toMatchObject({
      status: 409,
      message: expect.stringMatching(/request_id "worse-000001": this evaluation was early-stopped .* its early-stop record is missing/),
    });
    expect(again.ran()).toBe(0);
    expect(again.ledger.remaining(SPLIT)).toEqual(remaining);
    // A request of its own is evaluated as ever (charged).
    const fresh = await post(cfg, 'e'.repeat(40), 'worse-000002', Array<number>(N).fill(0));
    expect((await fresh.outcome).verdict).toMatchObject({ stopped: true });
    expect(fresh.ran()).toBeGreaterThan(0);
    expect(new EarlyStopStore(cfg.paths.admin_volume).load('worse-000002')).not.toBeNull();
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
