/**
 * Runs evaluations for the sidecar: Mode B as the durable candidate-evaluation workflow, Mode A as inference
 * (untrusted, in the candidate's worktree) followed by the trusted scorer.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@temporalio/client';
import { execa } from 'execa';
import { startOrAttach } from '../cli/eval-client';
import { configDigest, evalWorkflowId } from '../core/eval-identity';
import { CandidateResult, EvalInput, EvalSettings } from '../core/eval-types';
import { ensureWorktree } from '../core/git';
import { HarborSection } from '../core/harbor-config';
import type { ServeConfig, SplitAccess } from '../core/serve-config';
import { badRequest, notEvaluable } from './errors';
import type { SampleScore } from './results-routing';

export interface SampleRequest {
  sample_ids?: number[];
  num_samples?: number;
}

export interface EvalOutcome {
  commit: string;
  split: string;
  samples: SampleScore[];
  meanScore: number;
  nErrors: number;
  fullSplit: boolean;
}

export class Engine {
  constructor(
    private readonly cfg: ServeConfig,
    private readonly temporal: { client: Client; taskQueue: string } | null,
  ) {}

  /** Fail closed: a split that is not listed is no_access. */
  tier(split: string): SplitAccess {
    return this.cfg.splits.find((s) => s.split === split)?.access ?? 'no_access';
  }

  /** The sample names of a split, in their canonical order (ids are indices). */
  splitSamples(split: string): string[] {
    if (this.cfg.mode === 'B') return this.cfg.mode_b!.partition[split] ?? [];
    const file = path.join(this.cfg.mode_a!.dataset_dir, `${split}.jsonl`);
    if (!fs.existsSync(file)) return [];
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l, i) => String((JSON.parse(l) as { id?: unknown }).id ?? i));
  }

  select(split: string, req: SampleRequest): { ids: number[]; full: boolean } {
    const all = this.splitSamples(split);
    if (all.length === 0) throw notEvaluable(`split "${split}" has no samples`);
    if (req.sample_ids && req.num_samples !== undefined) throw badRequest('give sample_ids or num_samples, not both');
    if (req.sample_ids) {
      const bad = req.sample_ids.filter((i) => !Number.isInteger(i) || i < 0 || i >= all.length);
      if (bad.length) throw badRequest(`sample_ids out of range 0..${all.length - 1}: ${bad.join(', ')}`);
      const ids = [...new Set(req.sample_ids)].sort((a, b) => a - b);
      if (ids.length === 0) throw badRequest('sample_ids is empty');
      return { ids, full: ids.length === all.length };
    }
    const n = req.num_samples === undefined ? all.length : Math.min(req.num_samples, all.length);
    if (n < 1) throw badRequest('num_samples must be at least 1');
    return { ids: Array.from({ length: n }, (_, i) => i), full: n === all.length };
  }

  async evaluate(commit: string, split: string, ids: number[]): Promise<EvalOutcome> {
    const names = this.splitSamples(split);
    const samples =
      this.cfg.mode === 'B'
        ? await this.evaluateModeB(
            commit,
            ids.map((i) => names[i]!),
            ids,
          )
        : await this.evaluateModeA(commit, split, ids);
    const nErrors = samples.filter((s) => s.score === null).length;
    const meanScore = samples.length ? samples.reduce((a, s) => a + (s.score ?? 0), 0) / samples.length : 0;
    return { commit, split, samples, meanScore, nErrors, fullSplit: ids.length === names.length };
  }

  private settings(): EvalSettings {
    const b = this.cfg.mode_b!;
    return {
      harbor: HarborSection.parse(b.harbor),
      source: { path: b.task_source.path },
      rewardKey: null,
      aggregate: 'best',
      errorRateThreshold: 1,
      concurrency: this.cfg.max_concurrency,
      taskTimeoutSec: this.cfg.timeout_sec,
      taskAttempts: 3,
      heartbeatTimeoutSec: this.cfg.heartbeat_timeout_sec,
      chunkSize: 500,
      isolation: { runAs: this.cfg.harness_user, passEnv: this.cfg.secrets },
    };
  }

  private async evaluateModeB(commit: string, tasks: string[], ids: number[]): Promise<SampleScore[]> {
    if (!this.temporal) throw new Error('mode B needs a Temporal connection');
    const settings = this.settings();
    const sorted = [...tasks].sort();
    const digest = configDigest(sorted, settings);
    const input = EvalInput.parse({
      evalId: evalWorkflowId(commit, digest),
      candidate: commit,
      candidateRef: commit,
      agentRepo: this.cfg.repo_path,
      home: this.cfg.paths.home,
      tasks: sorted,
      configDigest: digest,
      settings,
    });
    const { handle } = await startOrAttach(this.temporal.client, input, this.temporal.taskQueue);
    const result = (await handle.result()) as CandidateResult;
    const rows = result.tasks ?? (JSON.parse(fs.readFileSync(result.resultFile, 'utf8')) as CandidateResult).tasks ?? [];
    const byTask = new Map(rows.map((t) => [t.task, t]));
    return tasks.map((name, i) => {
      const t = byTask.get(name);
      return { id: ids[i]!, name, score: t?.score ?? null, error: t ? t.error : 'no result' };
    });
  }

  private async evaluateModeA(commit: string, split: string, ids: number[]): Promise<SampleScore[]> {
    const a = this.cfg.mode_a!;
    const rows = fs
      .readFileSync(path.join(a.dataset_dir, `${split}.jsonl`), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l, i) => ({ i, row: JSON.parse(l) as { id?: unknown; inputs: unknown; labels: unknown } }));
    const chosen = ids.map((i) => rows[i]!);
    const worktree = path.join(this.cfg.paths.home, 'worktrees', commit);
    await ensureWorktree(this.cfg.repo_path, commit, worktree);
    // Untrusted: the candidate's inference sees the inputs only, never the labels.
    const inputs = chosen.map(({ i, row }) => JSON.stringify({ id: i, inputs: row.inputs })).join('\n');
    const inf = await execa(a.inference.command[0]!, a.inference.command.slice(1), {
      cwd: worktree,
      input: `${inputs}\n`,
      reject: false,
      timeout: this.cfg.timeout_sec * 1000,
      extendEnv: false,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' },
    });
    const outputs = new Map<number, unknown>();
    for (const line of String(inf.stdout).split('\n')) {
      try {
        const o = JSON.parse(line) as { id: number; output: unknown };
        outputs.set(Number(o.id), o.output);
      } catch {
        /* not an output row */
      }
    }
    const toScore = chosen
      .filter(({ i }) => outputs.has(i))
      .map(({ i, row }) => JSON.stringify({ id: i, output: outputs.get(i), labels: row.labels }));
    const scores = new Map<number, number>();
    if (toScore.length) {
      const sc = await execa(a.scorer.command[0]!, a.scorer.command.slice(1), {
        cwd: a.scorer.cwd,
        input: `${toScore.join('\n')}\n`,
        reject: false,
        timeout: this.cfg.timeout_sec * 1000,
      });
      if (sc.exitCode !== 0) throw new Error(`the trusted scorer failed (exit ${sc.exitCode})`);
      for (const line of String(sc.stdout).split('\n').filter(Boolean)) {
        const s = JSON.parse(line) as { id: number; score: number };
        scores.set(Number(s.id), Number(s.score));
      }
    }
    return chosen.map(({ i, row }) => ({
      id: i,
      name: String(row.id ?? i),
      score: scores.get(i) ?? null,
      error: scores.has(i) ? null : outputs.has(i) ? 'not scored' : `no output from inference (exit ${inf.exitCode})`,
      output: outputs.get(i),
    }));
  }
}
