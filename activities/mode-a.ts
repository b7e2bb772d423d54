/**
 * A Mode A evaluation of the eval sidecar as an activity: the candidate's inference (untrusted, in its
 * worktree, inputs only, in its own process group) and then the trusted scorer (labels). The scores go to a
 * file under the home; the activity returns its path (payloads stay small).
 */
import type { ModeAInput } from '../model/evaluation/activity-payloads';
import type { SampleScore } from '../model/compiled-task/sample-score';
import { Context, CancelledFailure } from '@temporalio/activity';
import { ensureWorktree } from '../infra/git';
import { runInGroup } from '../infra/process-group';
import { withHeartbeat } from './heartbeat';
import { homePaths, modeAPaths } from '../model/paths';
import { NO_INFERENCE_OUTPUT } from '../model/evaluation/task-result';
import { writeFileDurable, writeJsonDurable } from '../infra/atomic-file';
import { readEnvFile } from '../infra/env-file';
import { ensureModeADir, readAnswerLines, readSplitRows } from '../infra/mode-a-files';
import { InfrastructureError } from '../model/errors';
import { evaluateWithHarness } from './mode-a-harness';

export type { ModeAInput };

export async function runModeA(input: ModeAInput): Promise<{ resultFile: string }> {
  return withHeartbeat(() => (input.harness ? evaluateWithHarness(input, input.harness) : evaluate(input)));
}

type Sample = { i: number; row: { id?: unknown; inputs: unknown; labels: unknown } };
type ModeAFiles = ReturnType<typeof modeAPaths>;
/** What the candidate's inference and the scorer share: the evaluation's deadline and its cancellation. */
type Run = { deadline: number; signal: AbortSignal };

async function evaluate(input: ModeAInput): Promise<{ resultFile: string }> {
  const dir = homePaths(input.home).modeADir(input.id);
  const files = modeAPaths(dir);
  ensureModeADir(dir);
  const rows = readSplitRows<Sample['row']>(input.datasetDir, input.split);
  const chosen = input.ids.map((i) => rows[i]!);
  const worktree = homePaths(input.home).worktree(input.commit);
  await ensureWorktree(input.repo, input.commit, worktree);
  // A cancelled evaluation stops inference and scoring as whole process groups.
  const run = { deadline: Date.now() + input.timeoutSec * 1000, signal: Context.current().cancellationSignal };
  const { inf, outputs } = await runInference(input, chosen, worktree, files, run);
  const scores = await runScorer(input, chosen, outputs, files, run);
  const result: SampleScore[] = chosen.map(({ i, row }) => ({
    id: i,
    name: String(row.id ?? i),
    score: scores.get(i) ?? null,
    error: scores.has(i)
      ? null
      : outputs.has(i)
        ? 'not scored'
        : `${NO_INFERENCE_OUTPUT} (${inf.timedOut ? 'timed out' : `exit ${inf.exitCode ?? inf.signal}`})`,
    output: outputs.get(i),
  }));
  const resultFile = files.result;
  writeJsonDurable(resultFile, result, { compact: true });
  return { resultFile };
}

/** Untrusted: the candidate's inference sees the inputs only, never the labels, in its own process group. Its outputs by sample. */
async function runInference(input: ModeAInput, chosen: Sample[], worktree: string, files: ModeAFiles, { deadline, signal }: Run) {
  writeFileDurable(files.inputs, `${chosen.map(({ i, row }) => JSON.stringify({ id: i, inputs: row.inputs })).join('\n')}\n`, {
    fsync: false,
  });
  const inf = await runInGroup(input.inference, {
    cwd: worktree,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/',
      ...(input.envFile ? readEnvFile(input.envFile, `inference-${input.split}`) : {}),
    },
    cleanEnv: true,
    logFile: files.inferenceLog,
    stdinFile: files.inputs,
    stdoutFile: files.outputs,
    deadline,
    signal,
  });
  if (inf.cancelled) throw signal.reason ?? new CancelledFailure('cancelled');
  const outputs = new Map<number, unknown>();
  for (const o of readAnswerLines(files.outputs) as { id: number; output: unknown }[])
    if (o && typeof o === 'object' && 'id' in o) outputs.set(Number(o.id), o.output);
  return { inf, outputs };
}

/** Trusted: the scorer sees each answered sample's output beside its labels; its scores by sample (none when nothing was answered). */
async function runScorer(
  input: ModeAInput,
  chosen: Sample[],
  outputs: Map<number, unknown>,
  files: ModeAFiles,
  { deadline, signal }: Run,
): Promise<Map<number, number>> {
  const toScore = chosen.filter(({ i }) => outputs.has(i));
  const scores = new Map<number, number>();
  if (!toScore.length) return scores;
  writeFileDurable(
    files.toScore,
    `${toScore.map(({ i, row }) => JSON.stringify({ id: i, output: outputs.get(i), labels: row.labels })).join('\n')}\n`,
    { fsync: false },
  );
  const sc = await runInGroup(input.scorer.command, {
    cwd: input.scorer.cwd,
    logFile: files.scorerLog,
    stdinFile: files.toScore,
    stdoutFile: files.scores,
    deadline,
    signal,
  });
  if (sc.cancelled) throw signal.reason ?? new CancelledFailure('cancelled');
  if (sc.exitCode !== 0)
    throw new InfrastructureError(`the trusted scorer failed (exit ${sc.exitCode ?? sc.signal}); its log: ${files.scorerLog}`);
  for (const s of readAnswerLines(files.scores) as { id: number; score: number }[])
    if (s && typeof s === 'object' && 'id' in s) scores.set(Number(s.id), Number(s.score));
  return scores;
}
