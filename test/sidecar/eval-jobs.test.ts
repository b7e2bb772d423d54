/**
 * Bounded agent-side calls: `vero eval` returns within its bound with the evaluation's id and progress, `vero eval
 * wait` (repeatable) returns the result, the budget is charged once, a cancelled evaluation exits 1 with the
 * reason, a restarted sidecar still answers for (and resumes) a job; vero's `evals run/status/wait/submit`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pidAlive, until } from '../helpers/process';
import { cli, commitImprovement, finalizeAsVerifier, harborStarts, setup as setupTask, startSidecar } from '../helpers/sidecar';

jest.setTimeout(420_000);

// Set-ups of the same build file share one compiled task (each still has its own workspace, volumes and queue).
const setup = (over?: Parameters<typeof setupTask>[0]) => setupTask(over, { shareBuild: true });

// The tests are independent (each its own sidecar, Temporal task queue and state dirs) and mostly wait on simulated
// trials, so they run side by side (test.concurrent).

const runsLeft = async (url: string, split: string) =>
  (
    (await (await fetch(`${url}/status`)).json()) as { splits: { split: string; budget: { remaining_run_budget: number } | null }[] }
  ).splits.find((x) => x.split === split)!.budget!.remaining_run_budget;

test.concurrent(
  'vero eval returns within its bound with the id and progress; vero eval wait (repeated) returns the result; charged once',
  async () => {
    // Each validation task takes 15 s: far longer than the 1 s bound.
    const s = await setup({ timeScale: '1', scenario: { default: { reward: 1, duration_ms: 15_000 } } });
    const side = await startSidecar(s);
    try {
      const candidate = commitImprovement(s.work);
      const first = await cli(['eval', '--split', 'validation', '--timeout', '1', '--poll-interval', '1', '--json'], side.url);
      expect(first.code).toBe(0);
      // It returned while the evaluation was still running: at its bound, not at the evaluation's end.
      const running = JSON.parse(first.stdout) as { evalId: string; status: string; commit: string; nSamples: number; next: string };
      expect(running).toMatchObject({ status: 'running', commit: candidate, nSamples: 2 });
      expect(running.next).toBe(`vero eval wait ${running.evalId}`);
      // The text form says what to run next.
      const waitedOnce = await cli(['eval', 'wait', running.evalId, '--timeout', '0'], side.url);
      expect(waitedOnce.code).toBe(0);
      expect(waitedOnce.stdout).toContain(`evaluation ${running.evalId} is still running: validation @ ${candidate.slice(0, 12)}`);
      expect(waitedOnce.stdout).toContain(`run \`vero eval wait ${running.evalId}\``);
      let done: { code: number | null; stdout: string } = waitedOnce;
      for (let i = 0; i < 30 && !done.stdout.includes('mean score'); i++)
        done = await cli(['eval', 'wait', running.evalId, '--timeout', '5', '--poll-interval', '1'], side.url);
      expect(done.code).toBe(0);
      expect(done.stdout).toContain(`validation @ ${candidate.slice(0, 12)}: mean score 1.000 over 2 sample(s)`);
      // Waiting again on a finished evaluation answers the same result, and nothing more is charged.
      const again = await cli(['eval', 'wait', running.evalId, '--json'], side.url);
      expect(JSON.parse(again.stdout)).toMatchObject({ evalId: running.evalId, meanScore: 1, commit: candidate });
      expect(await runsLeft(side.url, 'validation')).toBe(2);
      const unknown = await cli(['eval', 'wait', 'no-such-job-0000'], side.url);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('eval sidecar replied 404: no evaluation job "no-such-job-0000"');
    } finally {
      await side.stop();
    }
  },
);

test.concurrent('a sidecar killed mid-evaluation still answers vero eval wait after its restart (resumed, charged once)', async () => {
  const s = await setup({ timeScale: '1', scenario: { default: { reward: 1, duration_ms: 4000 } } });
  const first = await startSidecar(s);
  const candidate = commitImprovement(s.work);
  const started = await cli(['eval', '--split', 'validation', '--detach', '--json'], first.url);
  expect(started.code).toBe(0);
  const id = (JSON.parse(started.stdout) as { evalId: string }).evalId;
  await until('harbor to start', async () => fs.existsSync(path.join(s.dir, 'harbor.jsonl')));
  expect(await first.stop('SIGKILL')).toBeNull();
  const second = await startSidecar(s);
  try {
    const done = await cli(['eval', 'wait', id, '--timeout', '90', '--poll-interval', '1', '--json'], second.url);
    expect(done.code).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({ evalId: id, commit: candidate, meanScore: 1 });
    expect(await runsLeft(second.url, 'validation')).toBe(2);
  } finally {
    await second.stop();
  }
});

test.concurrent('a cancelled evaluation makes vero eval wait exit 1 with the reason', async () => {
  const s = await setup({ timeScale: '1', scenario: { default: { reward: 1, duration_ms: 120_000 } }, build: { drain_timeout: '2s' } });
  const side = await startSidecar(s);
  try {
    commitImprovement(s.work);
    const started = await cli(['eval', '--split', 'validation', '--detach', '--json'], side.url);
    const id = (JSON.parse(started.stdout) as { evalId: string }).evalId;
    await until('the evaluation runs', async () => harborStarts(s).length >= 2);
    expect((await finalizeAsVerifier(side, s)).json).toMatchObject({ drain: { cancelled: 1 } });
    const waited = await cli(['eval', 'wait', id, '--timeout', '30', '--poll-interval', '1'], side.url);
    expect(waited.code).toBe(1);
    expect(waited.stderr).toBe(`error: evaluation ${id} cancelled: cancelled: finalization has begun\n`);
    for (const h of harborStarts(s)) expect(pidAlive(h.pid)).toBe(false);
  } finally {
    await side.stop();
  }
});

test.concurrent("vero's agent-side commands: evals run / status / wait / submit, as vero documents them", async () => {
  const s = await setup({ reward_mode: 'submit', submit_enabled: true });
  const side = await startSidecar(s);
  try {
    const candidate = commitImprovement(s.work);
    const run = await cli(['evals', 'run', '--backend', 'harbor', '--evaluation-set', 'x', '--partition', 'validation'], side.url);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as { job_id: string; commit: string; mean_score: number; n_samples: number };
    expect(result).toMatchObject({ commit: candidate, mean_score: 1, n_samples: 2 });
    // A slice and a named case, on the viewable split.
    const slice = JSON.parse((await cli(['evals', 'run', '--partition', 'train', '--start', '1', '--stop', '3'], side.url)).stdout) as {
      n_samples: number;
    };
    expect(slice.n_samples).toBe(2);
    const named = await cli(['evals', 'run', '--partition', 'train', '--case-id', 'count-words', '--detach'], side.url);
    const job = JSON.parse(named.stdout) as { job_id: string; status: string; n_samples: number };
    expect(job.n_samples).toBe(1);
    const waited = JSON.parse((await cli(['evals', 'wait', job.job_id, '--poll-interval', '1'], side.url)).stdout) as {
      mean_score: number;
    };
    expect(waited.mean_score).toBe(1);
    const status = JSON.parse((await cli(['evals', 'status', job.job_id], side.url)).stdout) as { status: string };
    expect(status.status).toBe('complete');
    const splits = JSON.parse((await cli(['evals', 'status'], side.url)).stdout) as { splits: { split: string }[] };
    expect(splits.splits.map((x) => x.split)).toEqual(['train', 'validation', 'test']);
    const submit = await cli(['evals', 'submit', '--version', candidate], side.url);
    expect(JSON.parse(submit.stdout)).toEqual({ submitted_commit: candidate });
    const bad = await cli(['evals', 'run', '--partition', 'train', '--case-id', 'nope'], side.url);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown case id(s) of split "train": nope');
    // The compiled task's main has `evals` on PATH next to `vero`.
    expect(fs.existsSync(path.join(__dirname, '../../bin/evals'))).toBe(true);
  } finally {
    await side.stop();
  }
});
