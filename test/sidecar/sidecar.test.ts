/**
 * The eval sidecar as a real process: real HTTP, the test Temporal server, the Harbor stand-in, real git repos.
 */
import { conforming } from '../helpers/json-schema';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { STANDIN, taskOf } from '../helpers/fixtures';
import { address, uniqueQueue } from '../helpers/temporal';
import { pidAlive, until } from '../helpers/process';
import {
  cli,
  commitImprovement,
  finalizeAsVerifier,
  git,
  harborStarts,
  listFiles,
  modeASetup,
  post,
  setup as setupTask,
  startSidecar,
  VERO,
} from '../helpers/sidecar';

jest.setTimeout(180_000);

// Each test has its own set-up, sidecar, task queue and volumes, and spends much of its time waiting on its sidecar's
// evaluations (Temporal tasks, the stand-in's harbor runs, child processes): they run side by side (test.concurrent;
// jest's maxConcurrency bounds how many at once).

/** Tests with the same build file share its compile (each with its own baseline repo, workspace and volumes). */
const setup = (over?: Parameters<typeof setupTask>[0]) => setupTask(over, { shareBuild: true });

test.concurrent('the optimizer loop: commit → eval → budget → finalize → reward.json; tiers shape what the agent sees', async () => {
  const s = await setup();
  const side = await startSidecar(s);
  try {
    // The token exists with mode 0600 and never appears in the sidecar's output.
    const tokenStat = fs.statSync(s.cfg.paths.token_path);
    expect(tokenStat.mode & 0o777).toBe(0o600);
    const token = fs.readFileSync(s.cfg.paths.token_path, 'utf8');
    expect(token.length).toBeGreaterThanOrEqual(40);

    // Baseline evaluation (creates no candidate for auto_best).
    const base = await cli(['eval', '--split', 'validation', '--json'], side.url);
    expect(base.code).toBe(0);
    // camelCase like every `vero … --json`, and as its shipped schema says.
    const baseReply = conforming<{ commit: string; meanScore: number; budgetRemaining: { remainingRunBudget: number } }>(
      'eval',
      base.stdout,
    );
    expect(baseReply.commit).toBe(s.cfg.base_commit);
    expect(baseReply.budgetRemaining.remainingRunBudget).toBe(2);

    const candidate = commitImprovement(s.work);
    const ev = await cli(['eval', '--split', 'validation'], side.url);
    expect(ev.code).toBe(0);
    expect(ev.stdout).toContain(`validation @ ${candidate.slice(0, 12)}: mean score 1.000 over 2 sample(s)`);
    // non_viewable: the aggregate only.
    const valDir = path.join(s.cfg.paths.agent_volume, 'results', `validation__${candidate.slice(0, 12)}`);
    expect(listFiles(valDir)).toEqual(['summary.json']);
    // viewable: per-sample files too.
    expect((await cli(['eval', '--split', 'train', '--num-samples', '2'], side.url)).code).toBe(0);
    expect(listFiles(path.join(s.cfg.paths.agent_volume, 'results', `train__${candidate.slice(0, 12)}`))).toEqual([
      '0.json',
      '1.json',
      'summary.json',
    ]);

    const budget = await cli(['budget', '--json'], side.url);
    const splits = conforming<{
      splits: { split: string; access: string; agentEvaluable: boolean; budget: { remainingRunBudget: number } | null }[];
    }>('budget', budget.stdout).splits;
    expect(splits.find((x) => x.split === 'validation')).toMatchObject({ agentEvaluable: true, budget: { remainingRunBudget: 1 } });
    expect(splits.find((x) => x.split === 'train')).toMatchObject({ budget: { remainingRunBudget: 4 } });
    expect(splits.find((x) => x.split === 'test')).toEqual({ split: 'test', access: 'no_access', agentEvaluable: false, budget: null });

    // The hidden split is not evaluable, and neither is a split nobody listed (fail closed).
    for (const split of ['test', 'dev']) {
      const r = await cli(['eval', '--split', split], side.url);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`error: eval sidecar replied 400: split "${split}" is not evaluable\n`);
    }
    expect(await post(side.url, '/finalize', {})).toEqual({ status: 403, json: { error: 'a valid admin token is required' } });
    expect((await post(side.url, '/finalize', {}, { authorization: 'Bearer wrong' })).status).toBe(403);

    const rewardFile = path.join(s.dir, 'logs', 'verifier', 'reward.json');
    const fin = await cli(['finalize', '--token-file', s.cfg.paths.token_path, '--output', rewardFile], side.url);
    expect(fin.code).toBe(0);
    // The candidate solves add-cli-flag (the hidden test task); the baseline does not.
    expect(JSON.parse(fs.readFileSync(rewardFile, 'utf8'))).toEqual({ reward: 1 });
    expect(fin.stderr).toContain(`finalize: ${candidate}`);
    // Nothing about the hidden split reached the agent-visible volume.
    expect(listFiles(path.join(s.cfg.paths.agent_volume, 'results')).filter((f) => f.startsWith('test'))).toEqual([]);
    expect(side.log()).not.toContain(token);
  } finally {
    await side.stop();
  }
});

test.concurrent('budget: exhaustion is 429 and costs nothing; 20 concurrent requests never overspend', async () => {
  const s = await setup({
    budgets: [
      { split: 'train', total_run_budget: 5 },
      { split: 'validation', total_run_budget: 1, total_sample_budget: 2 },
    ],
  });
  const side = await startSidecar(s);
  try {
    const replies = await Promise.all(Array.from({ length: 20 }, () => post(side.url, '/eval', { split: 'train', num_samples: 1 })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(5);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(15);
    expect(replies.find((r) => r.status === 429)!.json.error).toBe('run budget of split "train" is exhausted');
    const ledger = JSON.parse(fs.readFileSync(path.join(s.cfg.paths.admin_volume, 'ledger.json'), 'utf8')) as {
      budgets: Record<string, { remaining_run_budget: number }>;
      reservations: unknown[];
    };
    expect(ledger.budgets.train!.remaining_run_budget).toBe(0);
    expect(ledger.reservations).toHaveLength(5);
    const first = await cli(['eval', '--split', 'validation'], side.url);
    expect(first.code).toBe(0);
    const second = await cli(['eval', '--split', 'validation'], side.url);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('eval sidecar replied 429: run budget of split "validation" is exhausted');
    // A request that fails validation is rejected before any reservation.
    expect((await post(side.url, '/eval', { split: 'train', sample_ids: [99] })).status).toBe(400);
    expect((await post(side.url, '/eval', { split: 'train', bogus: 1 })).status).toBe(400);
    expect((await post(side.url, '/eval', { split: 'train', commit: 'no-such-ref' })).json.error).toMatch(
      /commit "no-such-ref" could not be fetched from the agent repo/,
    );
  } finally {
    await side.stop();
  }
});

test.concurrent(
  'a restart in the middle of an evaluation does not refill the budget; candidates survive; a corrupt ledger fails closed',
  async () => {
    const s = await setup({ scenario: { default: { reward: 1, duration_ms: 4000 } }, timeScale: '1' });
    const first = await startSidecar(s);
    const candidate = commitImprovement(s.work);
    const pending = post(first.url, '/eval', { split: 'validation' }).catch(() => null);
    await until('harbor to start', async () => fs.existsSync(path.join(s.dir, 'harbor.jsonl')));
    expect(await first.stop('SIGKILL')).toBeNull();
    await pending;
    const second = await startSidecar(s);
    try {
      const status = (await (await fetch(`${second.url}/status`)).json()) as {
        splits: { split: string; budget: { remaining_run_budget: number } | null }[];
      };
      expect(status.splits.find((x) => x.split === 'validation')!.budget!.remaining_run_budget).toBe(2);
      // A completed evaluation is in the registry after a restart, and finalize picks it.
      const ok = await post(second.url, '/eval', { split: 'validation' });
      expect(ok.status).toBe(200);
    } finally {
      await second.stop('SIGKILL');
    }
    const third = await startSidecar(s);
    try {
      const token = fs.readFileSync(s.cfg.paths.token_path, 'utf8');
      const fin = await post(third.url, '/finalize', {}, { authorization: `Bearer ${token}` });
      expect(fin.json).toMatchObject({ commit: candidate, rewards: { reward: 1 } });
    } finally {
      await third.stop();
    }
    fs.writeFileSync(path.join(s.cfg.paths.admin_volume, 'ledger.json'), '{"schema_version": 1, "budgets": {');
    const r = spawnSync(VERO, ['serve', '--config', s.serveFile, '--address', address(), '--task-queue', s.queue], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('refusing to start rather than refill the budget');
  },
);

test.concurrent(
  'no candidate: finalize returns floor rewards and a reason, never a crash; it runs once; submit mode grades the submission',
  async () => {
    const s = await setup({ reward_mode: 'submit', submit_enabled: true });
    const side = await startSidecar(s);
    try {
      const token = fs.readFileSync(s.cfg.paths.token_path, 'utf8');
      const none = await post(side.url, '/finalize', {}, { authorization: `Bearer ${token}` });
      expect(none).toEqual({
        status: 200,
        json: {
          rewards: { reward: 0 },
          commit: null,
          reason:
            'no candidate was submitted; no candidate was evaluated on "validation" (baseline evaluations do not count): floor rewards',
          candidates: [],
          objective: { metric: 'score', direction: 'maximize', constraints: [] }, // what ranked: the evaluation's mean
        },
      });
      // Finalize is the verifier's last word: a later submission does not change it, a second call replays it.
      commitImprovement(s.work, ['add-cli-flag']);
      await cli(['submit'], side.url);
      const again = await post(side.url, '/finalize', {}, { authorization: `Bearer ${token}` });
      expect(again.json).toEqual({ ...none.json, replayed: true });
    } finally {
      await side.stop();
    }
    const sub = await setup({ reward_mode: 'submit', submit_enabled: true });
    const sideSub = await startSidecar(sub);
    try {
      const token = fs.readFileSync(sub.cfg.paths.token_path, 'utf8');
      const candidate = commitImprovement(sub.work, ['add-cli-flag']);
      const r = await cli(['submit'], sideSub.url);
      expect(r.stdout).toBe(`submitted ${candidate}\n`);
      const fin = await post(sideSub.url, '/finalize', {}, { authorization: `Bearer ${token}` });
      expect(fin.json).toMatchObject({ commit: candidate, rewards: { reward: 1 }, reason: 'submitted candidate' });
    } finally {
      await sideSub.stop();
    }
    const auto = await setup();
    const side2 = await startSidecar(auto);
    try {
      const token = fs.readFileSync(auto.cfg.paths.token_path, 'utf8');
      // Only the baseline was evaluated: it is not a candidate.
      expect((await post(side2.url, '/eval', { split: 'validation' })).status).toBe(200);
      const fin = await post(side2.url, '/finalize', {}, { authorization: `Bearer ${token}` });
      expect(fin.json).toMatchObject({
        rewards: { reward: 0 },
        commit: null,
        reason: 'no candidate was evaluated on "validation" (baseline evaluations do not count): floor rewards',
        candidates: [{ commit: auto.cfg.base_commit, split: 'validation', admin: false }],
      });
      expect((await post(side2.url, '/submit', {})).status).toBe(409);
    } finally {
      await side2.stop();
    }
  },
);

test.concurrent(
  'a remote nested environment: -e and --ek reach the nested harbor, with the declared secrets and nothing else of the sidecar’s environment',
  async () => {
    const s = await setup({
      harbor: { environment: 'modal', environment_kwargs: { app_name: 'bench' } },
      secrets: ['VERO_FAKE_MODAL_TOKEN'],
    });
    const side = await startSidecar(s, { VERO_FAKE_MODAL_TOKEN: 'tok-123', VERO_UNDECLARED_SECRET: 'nope' });
    try {
      expect((await cli(['eval', '--split', 'train'], side.url)).code).toBe(0);
      const runs = fs
        .readFileSync(path.join(s.dir, 'harbor.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; argv: string[]; env_names: string[] })
        .filter((l) => l.event === 'start');
      expect(runs.length).toBeGreaterThanOrEqual(3); // the preflight and one run per task
      for (const r of runs) {
        expect(r.argv.join(' ')).toContain('-e modal');
        expect(r.argv.join(' ')).toContain('--ek app_name=bench');
        expect(r.env_names).toContain('VERO_FAKE_MODAL_TOKEN');
        expect(r.env_names).not.toContain('VERO_UNDECLARED_SECRET');
      }
    } finally {
      await side.stop();
    }
  },
);

test.concurrent('submit mode without a submission falls back to auto_best, and says so', async () => {
  const s = await setup({ reward_mode: 'submit', submit_enabled: true });
  const side = await startSidecar(s);
  try {
    const candidate = commitImprovement(s.work, ['add-cli-flag', 'sum-numbers']);
    expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
    const token = fs.readFileSync(s.cfg.paths.token_path, 'utf8');
    const fin = await post(side.url, '/finalize', {}, { authorization: `Bearer ${token}` });
    expect(fin.json).toMatchObject({
      commit: candidate,
      rewards: { reward: 1 },
      reason: 'no candidate was submitted; best of 1 re-scored candidate(s) on "validation"',
    });
  } finally {
    await side.stop();
  }
});

test.concurrent(
  'pinned baselines: the floor compares with the pinned selection score and grades the seed at its pinned reward, unscored; score_baseline reports the seed next to the reward',
  async () => {
    const harborTasks = (s: { dir: string }) => harborStarts(s).map(taskOf);
    const pinned = await setup({
      build: {
        baseline_floor: true,
        baseline_selection_score: 0.99,
        targets: [{ split: 'test', reward_key: 'reward', baseline_reward: 0.42 }],
      },
    });
    const side = await startSidecar(pinned);
    try {
      commitImprovement(pinned.work, ['sum-numbers']); // 0.5 on validation: below the pinned 0.99
      expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
      const fin = await finalizeAsVerifier(side, pinned);
      expect(fin.json).toMatchObject({
        commit: pinned.cfg.base_commit,
        rewards: { reward: 0.42 },
        reason: 'no candidate beat the baseline (0.990, pinned) on "validation"',
        baselines: { reward: { reward: 0.42, source: 'pinned' } },
      });
      // Harbor ran the candidate's evaluation and its re-score on validation, and nothing of the seed.
      expect(harborTasks(pinned).sort()).toEqual(['fix-csv-parser', 'fix-csv-parser', 'sum-numbers', 'sum-numbers']);
    } finally {
      await side.stop();
    }
    const scored = await setup({ build: { score_baseline: true } });
    const side2 = await startSidecar(scored);
    try {
      const candidate = commitImprovement(scored.work, ['add-cli-flag', 'sum-numbers', 'fix-csv-parser']);
      expect((await cli(['eval', '--split', 'validation'], side2.url)).code).toBe(0);
      const out = path.join(scored.dir, 'verifier');
      const r = await cli(
        ['finalize', '--token-file', scored.cfg.paths.token_path, '--output', `${out}/reward.json`, '--details', `${out}/finalize.json`],
        side2.url,
      );
      expect(r.code).toBe(0);
      // reward.json keeps the candidate's rewards only; the seed's scored reward is in the details and the log line.
      expect(JSON.parse(fs.readFileSync(`${out}/reward.json`, 'utf8'))).toEqual({ reward: 1 });
      expect(JSON.parse(fs.readFileSync(`${out}/finalize.json`, 'utf8'))).toMatchObject({
        commit: candidate,
        rewards: { reward: 1 },
        baselines: { reward: { reward: 0, source: 'scored' } },
      });
      expect(r.stderr).toContain('baseline reward=0 (scored)');
      // The seed was scored once, on the target split.
      expect(harborTasks(scored).filter((t) => t === 'add-cli-flag')).toHaveLength(2);
    } finally {
      await side2.stop();
    }
  },
);

test.concurrent(
  'finalize drains: it waits for an agent evaluation still running and may grade its candidate, refuses new ones, and cancels what outlasts drain_timeout',
  async () => {
    const starts = harborStarts;
    // The candidate's validation tasks take 3 s: finalize is called while they run.
    const s = await setup({ timeScale: '1', scenario: { default: { reward: 1, duration_ms: 3000 } } });
    const side = await startSidecar(s);
    try {
      const candidate = commitImprovement(s.work, ['sum-numbers', 'fix-csv-parser', 'add-cli-flag']);
      const pending = post(side.url, '/eval', { split: 'validation', commit: candidate });
      await until('the evaluation runs', async () => starts(s).length >= 2);
      const token = fs.readFileSync(s.cfg.paths.token_path, 'utf8');
      const fin = post(side.url, '/finalize', {}, { authorization: `Bearer ${token}` });
      await until('finalize to begin its drain', async () => side.log().includes('finalize: waiting up to'));
      const late = await post(side.url, '/eval', { split: 'train' });
      expect(late.status).toBe(409);
      expect(JSON.stringify(late.json)).toContain('finalization has begun');
      expect((await pending).status).toBe(200);
      expect((await fin).json).toMatchObject({
        commit: candidate,
        rewards: { reward: 1 },
        drain: { in_flight: 1, finished: 1, cancelled: 0 },
      });
    } finally {
      await side.stop();
    }
    // An evaluation that outlasts the drain is cancelled: its harbor runs stop, and nothing of it is graded.
    const slow = await setup({
      timeScale: '1',
      scenario: { default: { reward: 1, duration_ms: 120_000 } },
      build: { drain_timeout: '2s' },
    });
    const side2 = await startSidecar(slow);
    try {
      const candidate = commitImprovement(slow.work, ['*']);
      const pending = post(side2.url, '/eval', { split: 'validation', commit: candidate });
      await until('the evaluation runs', async () => starts(slow).length >= 2);
      const fin = await finalizeAsVerifier(side2, slow);
      expect(fin.json).toMatchObject({ commit: null, rewards: { reward: 0 }, drain: { in_flight: 1, finished: 0, cancelled: 1 } });
      expect((fin.json as { drain: { waited_sec: number } }).drain.waited_sec).toBeLessThan(60);
      expect((await pending).status).toBeGreaterThanOrEqual(400);
      for (const h of starts(slow)) expect(pidAlive(h.pid)).toBe(false);
    } finally {
      await side2.stop();
    }
  },
);

test.concurrent('a held-out target with n_attempts is scored that many trials per task and averaged (not best-of)', async () => {
  // add-cli-flag (the test split) gives 1, 0 and 0.5 to its first three trials: best-of would say 1.
  const s = await setup({
    scenario: { tasks: { 'add-cli-flag': [{ reward: 1 }, { reward: 0 }, { reward: 0.5 }] }, default: { reward: 1 } },
    build: { targets: [{ split: 'test', reward_key: 'reward', n_attempts: 3 }] },
  });
  const side = await startSidecar(s);
  try {
    const candidate = commitImprovement(s.work, ['*']);
    expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
    const fin = await finalizeAsVerifier(side, s);
    expect(fin.json).toMatchObject({ commit: candidate, rewards: { reward: 0.5 } });
    const targetRun = harborStarts(s).find((i) => taskOf(i) === 'add-cli-flag')!;
    expect(targetRun.argv[targetRun.argv.indexOf('-k') + 1]).toBe('3');
  } finally {
    await side.stop();
  }
});

test.concurrent(
  'objective minimize: the lowest score wins, the reward is its negation, and no candidate gets the failure value, never a perfect 0',
  async () => {
    const objective = { direction: 'minimize', failure_value: 10 };
    const s = await setup({ build: { objective } });
    const side = await startSidecar(s);
    const commitProfile = (profile: object, message: string) => {
      fs.writeFileSync(path.join(s.work, 'harbor-standin-agent.json'), JSON.stringify(profile));
      git(s.work, 'add', '-A');
      git(s.work, 'commit', '-q', '-m', message);
      return git(s.work, 'rev-parse', 'HEAD');
    };
    try {
      // Scores as a latency would be: lower is better.
      const low = commitProfile({ solves: [], partial: { '*': 0.25 } }, 'fast');
      expect((await post(side.url, '/eval', { split: 'validation' })).json).toMatchObject({ mean_score: 0.25 });
      const high = commitProfile({ solves: ['*'] }, 'slow');
      expect((await post(side.url, '/eval', { split: 'validation' })).json).toMatchObject({ mean_score: 1 });
      const fin = await finalizeAsVerifier(side, s);
      expect(fin.json).toMatchObject({
        commit: low,
        rewards: { reward: -0.25 },
        shortlist: [
          { commit: low, recorded: 0.25, rescored: 0.25 },
          { commit: high, recorded: 1, rescored: 1 },
        ],
      });
    } finally {
      await side.stop();
    }
    const none = await setup({ build: { objective } });
    const side2 = await startSidecar(none);
    try {
      const fin = await finalizeAsVerifier(side2, none);
      expect(fin.json).toMatchObject({ commit: null, rewards: { reward: -10 } });
    } finally {
      await side2.stop();
    }
  },
);

test.concurrent('per target and per kind: a target reads its own Harbor metric; the verifier gets its own retries', async () => {
  const s = await setup({
    scenario: { tasks: { 'add-cli-flag': { rewards: { pass: 0.5, tests_passed: 7 } } }, default: { reward: 1 } },
    build: {
      targets: [{ split: 'test', reward_key: 'pass_rate', metric: 'pass' }],
      scoring: { trusted_retry: { max_retries: 2, retry_min_wait_sec: 5 } },
    },
  });
  const side = await startSidecar(s);
  try {
    const candidate = commitImprovement(s.work, ['*']);
    expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
    const fin = await finalizeAsVerifier(side, s);
    expect(fin.json).toMatchObject({ commit: candidate, rewards: { pass_rate: 0.5 } });
    const runs = harborStarts(s);
    const retriesOf = (task: string) => runs.filter((i) => i.argv.includes(task)).map((i) => i.argv[i.argv.indexOf('-r') + 1]);
    // sum-numbers: the agent's evaluation (no retries), then the verifier's re-score (its own).
    expect(retriesOf('sum-numbers')).toEqual(['0', '2']);
    expect(retriesOf('add-cli-flag')).toEqual(['2']);
    const trusted = runs.find((i) => i.argv.includes('add-cli-flag'))!;
    expect(JSON.parse(fs.readFileSync(trusted.argv[trusted.argv.indexOf('-c') + 1]!, 'utf8'))).toEqual({ retry: { min_wait_sec: 5 } });
  } finally {
    await side.stop();
  }
});

test.concurrent(
  'an aggregate-only split cannot be narrowed to single cases: below its minimum a request is refused at no cost',
  async () => {
    const s = await setup();
    const side = await startSidecar(s);
    try {
      // validation has 2 tasks: the minimum (5) is capped at the whole split.
      for (const body of [{ num_samples: 1 }, { sample_ids: [1] }]) {
        const r = await post(side.url, '/eval', { split: 'validation', ...body });
        expect(r).toEqual({
          status: 400,
          json: {
            error:
              'split "validation" shows only an aggregate score: a request must cover at least 2 case(s), this one covers 1 (nothing was charged)',
          },
        });
      }
      // A viewable split has no minimum; the full aggregate split is fine; only the two allowed runs were charged.
      expect((await post(side.url, '/eval', { split: 'train', num_samples: 1 })).status).toBe(200);
      expect((await post(side.url, '/eval', { split: 'validation' })).status).toBe(200);
      const status = (await (await fetch(`${side.url}/status`)).json()) as {
        splits: { split: string; budget: { remaining_run_budget: number } }[];
      };
      expect(Object.fromEntries(status.splits.filter((x) => x.budget).map((x) => [x.split, x.budget.remaining_run_budget]))).toEqual({
        train: 4,
        validation: 2,
      });
    } finally {
      await side.stop();
    }
  },
);

test.concurrent(
  'an infrastructure failure in a trusted evaluation fails finalize: no reward file, nothing recorded, never a floor',
  async () => {
    // The hidden target task never gets a rewarded trial (an environment error on every attempt).
    const s = await setup({ scenario: { tasks: { 'add-cli-flag': { exception: 'RuntimeError' } }, default: { reward: 1 } } });
    const side = await startSidecar(s);
    try {
      commitImprovement(s.work);
      expect((await cli(['eval', '--split', 'validation'], side.url)).code).toBe(0);
      const rewardFile = path.join(s.dir, 'verifier', 'reward.json');
      const details = path.join(s.dir, 'verifier', 'finalize.json');
      const fin = await cli(['finalize', '--token-file', s.cfg.paths.token_path, '--output', rewardFile, '--details', details], side.url);
      expect(fin.code).toBe(1);
      expect(fin.stderr).toMatch(
        /eval sidecar replied 503: the trusted evaluation of [0-9a-f]{12} on "test" has 1 of 1 sample\(s\) unscored for infrastructure reasons \(first: add-cli-flag: /,
      );
      expect(fs.existsSync(rewardFile)).toBe(false);
      expect(fs.existsSync(details)).toBe(false);
      expect(fs.existsSync(path.join(s.cfg.paths.admin_volume, 'finalize.json'))).toBe(false);
    } finally {
      await side.stop();
    }
  },
);

test.concurrent(
  'malformed requests are 400s that say what is wrong: a NUL in a commit, invalid UTF-8, broken JSON, prototype keys',
  async () => {
    const s = await setup();
    const side = await startSidecar(s);
    const raw = async (body: Uint8Array | string) => {
      const r = await fetch(`${side.url}/eval`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: body as BodyInit,
      });
      return { status: r.status, json: (await r.json()) as { error: string } };
    };
    try {
      expect(await post(side.url, '/eval', { split: 'train', commit: 'HEAD\u0000--upload-pack=x' })).toEqual({
        status: 400,
        json: { error: '"HEAD\\u0000--upload-pack=x" is not a commit reference' },
      });
      const badUtf8 = await raw(Buffer.concat([Buffer.from('{"split": "tr'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]));
      expect(badUtf8).toEqual({ status: 400, json: { error: 'the request body is not valid UTF-8' } });
      expect((await raw('{"split": ')).status).toBe(400);
      expect((await raw('{"split": "train", "__proto__": {"x": 1}}')).status).toBe(400);
      // None of it cost anything.
      expect((await (await fetch(`${side.url}/status`)).json()) as unknown).toMatchObject({
        splits: expect.arrayContaining([
          expect.objectContaining({ split: 'train', budget: expect.objectContaining({ remaining_run_budget: 5 }) }),
        ]),
      });
    } finally {
      await side.stop();
    }
  },
);

test.concurrent('the agent-side CLI explains a missing sidecar URL', async () => {
  const r = spawnSync(VERO, ['budget'], { encoding: 'utf8', env: { ...process.env, VERO_EVAL_URL: '' } });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('VERO_EVAL_URL is not set');
});

test.concurrent('untrusted code: the nested harness gets only declared secrets; a non-root user cannot read the token', async () => {
  const s = await setup();
  // A launcher that records the environment harbor runs with, then runs the stand-in.
  const envDump = path.join(s.dir, 'harness-env.txt');
  const wrapper = path.join(s.dir, 'harbor-env-dump');
  fs.writeFileSync(wrapper, `#!/bin/bash\nenv > ${envDump}\nexec ${STANDIN} "$@"\n`, { mode: 0o755 });
  const cfg = {
    ...s.cfg,
    secrets: ['VERO_DECLARED_SECRET'],
    mode_b: { ...s.cfg.mode_b!, harbor: { ...s.cfg.mode_b!.harbor, command: [wrapper] } },
  };
  fs.writeFileSync(s.serveFile, JSON.stringify(cfg));
  const side = await startSidecar(s, { VERO_DECLARED_SECRET: 'declared-value', VERO_UNDECLARED_CANARY: 'must-not-leak' });
  const url = side.url;
  try {
    expect((await post(url, '/eval', { split: 'train', num_samples: 1 })).status).toBe(200);
    const env = fs.readFileSync(envDump, 'utf8');
    expect(env).toContain('VERO_DECLARED_SECRET=declared-value');
    expect(env).not.toContain('must-not-leak');
    expect(env).not.toContain('VERO_TEMPORAL');
    // The token is root-owned 0600: another user gets nothing, even with every directory on the way open.
    for (let d = path.dirname(s.cfg.paths.token_path); d !== path.dirname(s.dir); d = path.dirname(d)) fs.chmodSync(d, 0o755);
    expect(spawnSync('ls', [path.dirname(s.cfg.paths.token_path)], { uid: 65534, gid: 65534, encoding: 'utf8' }).stdout).toContain(
      'admin.token',
    );
    const asNobody = spawnSync('cat', [s.cfg.paths.token_path], { uid: 65534, gid: 65534, encoding: 'utf8' });
    expect(asNobody.status).not.toBe(0);
    expect(asNobody.stdout).toBe('');
    expect(asNobody.stderr).toMatch(/Permission denied/);
  } finally {
    await side.stop();
  }
});

test.concurrent(
  'mode A: untrusted inference in the candidate worktree, scored by the trusted scorer; labels never reach the agent',
  async () => {
    const { dir, serveFile, hostCfg, work } = await modeASetup();
    const side = await startSidecar({ dir, serveFile, cfg: hostCfg, work, queue: uniqueQueue('mode-a') });
    try {
      // The baseline (the example's improved commit) answers + and *: every train sample right.
      const train = await post(side.url, '/eval', { split: 'train' });
      expect(train.status).toBe(200);
      expect(train.json.mean_score).toBe(1);
      const sample0 = JSON.parse(
        fs.readFileSync(path.join(hostCfg.paths.agent_volume, 'results', `train__${hostCfg.base_commit.slice(0, 12)}`, '0.json'), 'utf8'),
      ) as Record<string, unknown>;
      expect(sample0).toMatchObject({ id: 0, score: 1, error: null });
      expect(JSON.stringify(sample0)).not.toContain('labels');
      // A candidate that breaks multiplication scores lower; a committed "scorer" in the agent repo changes nothing.
      fs.writeFileSync(
        path.join(work, 'infer.py'),
        fs.readFileSync(path.join(work, 'infer.py'), 'utf8').replace('"*": lambda a, b: a * b', '"*": lambda a, b: 0'),
      );
      fs.writeFileSync(
        path.join(work, 'score.py'),
        'import json,sys\nfor l in sys.stdin: print(json.dumps({"id": json.loads(l)["id"], "score": 1.0}))\n',
      );
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', 'break multiply, add a fake scorer');
      const worse = await post(side.url, '/eval', { split: 'validation' });
      expect(worse.status).toBe(200);
      expect(worse.json.mean_score).toBe(0.5);
      expect(listFiles(path.join(hostCfg.paths.agent_volume, 'results', `validation__${String(worse.json.commit).slice(0, 12)}`))).toEqual([
        'summary.json',
      ]);
    } finally {
      await side.stop();
    }
  },
);

test.concurrent(
  'coverage: an evaluation of under 90% of the selection split cannot win auto_best; the last evaluated candidate is graded, with the reason',
  async () => {
    const { dir, serveFile, hostCfg, work } = await modeASetup();
    const side = await startSidecar({ dir, serveFile, cfg: hostCfg, work, queue: uniqueQueue('coverage') });
    try {
      fs.appendFileSync(path.join(work, 'NOTES.md'), 'a candidate\n');
      git(work, 'add', '-A');
      git(work, 'commit', '-q', '-m', 'candidate');
      const candidate = git(work, 'rev-parse', 'HEAD');
      // 5 of validation's 6 cases (83%): allowed by the aggregate minimum, below the coverage threshold.
      expect((await post(side.url, '/eval', { split: 'validation', num_samples: 5 })).status).toBe(200);
      const token = fs.readFileSync(hostCfg.paths.token_path, 'utf8');
      const fin = await post(side.url, '/finalize', {}, { authorization: `Bearer ${token}` });
      expect(fin.json).toMatchObject({
        commit: candidate,
        reason:
          'no candidate was evaluated on "validation" (baseline evaluations do not count; 1 evaluation(s) covered less than 90% of it); graded the last evaluated candidate',
        rewards: { accuracy: 1 },
      });
      expect(fin.json).not.toHaveProperty('shortlist');
    } finally {
      await side.stop();
    }
  },
);

test.concurrent('with harness_user set, the nested harbor runs as that unprivileged user', async () => {
  const s = await setup();
  const idFile = path.join(s.dir, 'harness-id.txt');
  const wrapper = path.join(s.dir, 'harbor-id');
  fs.writeFileSync(wrapper, `#!/bin/bash\nid -u > ${idFile}\nexec ${STANDIN} "$@"\n`, { mode: 0o755 });
  // Like the sidecar image: the harness may traverse (0711) to what it is handed, nothing more.
  // Its temp dir only: os.tmpdir() itself is the whole machine's (1777).
  fs.chmodSync(s.dir, 0o711);
  for (const f of [idFile, path.join(s.dir, 'harbor.jsonl')]) {
    fs.writeFileSync(f, '');
    fs.chmodSync(f, 0o666); // test artifacts the harness writes
  }
  const cfg = { ...s.cfg, harness_user: 'nobody', mode_b: { ...s.cfg.mode_b!, harbor: { ...s.cfg.mode_b!.harbor, command: [wrapper] } } };
  fs.writeFileSync(s.serveFile, JSON.stringify(cfg));
  const side = await startSidecar(s);
  try {
    const r = await post(side.url, '/eval', { split: 'train', num_samples: 1 });
    if (r.status !== 200) console.log(side.log().slice(-3000));
    expect(r.status).toBe(200);
    expect(r.json.mean_score).toBe(1);
    expect(fs.readFileSync(idFile, 'utf8').trim()).toBe('65534');
    // The admin state stays out of its reach.
    expect(spawnSync('cat', [path.join(s.cfg.paths.admin_volume, 'ledger.json')], { uid: 65534, gid: 65534 }).status).not.toBe(0);
  } finally {
    await side.stop();
  }
});

test.concurrent(
  'read_only_paths: a candidate that edits, deletes, renames or symlinks over a protected path is refused at no cost; finalize never grades one',
  async () => {
    const s = await setup({ read_only_paths: ['skills/**', 'agent.py'], budgets: [{ split: 'validation', total_run_budget: 3 }] });
    const side = await startSidecar(s);
    const remaining = async () =>
      (
        (await (await fetch(`${side.url}/status`)).json()) as {
          splits: { split: string; budget: { remaining_run_budget: number } | null }[];
        }
      ).splits.find((x) => x.split === 'validation')!.budget!.remaining_run_budget;
    const commitAll = (message: string) => {
      git(s.work, 'add', '-A');
      git(s.work, 'commit', '-q', '-m', message);
      return git(s.work, 'rev-parse', 'HEAD');
    };
    try {
      const baseline = git(s.work, 'rev-parse', 'HEAD');
      const attempts: [string, () => void, RegExp][] = [
        ['edit', () => fs.appendFileSync(path.join(s.work, 'skills', 'hello.sh'), 'echo cheat\n'), /skills\/hello\.sh \(modified\)/],
        ['delete', () => fs.rmSync(path.join(s.work, 'agent.py')), /agent\.py \(deleted\)/],
        [
          'rename',
          () => fs.renameSync(path.join(s.work, 'skills', 'count-words.sh'), path.join(s.work, 'cw.sh')),
          /skills\/count-words\.sh \(deleted\)/,
        ],
        [
          'symlink',
          () => {
            fs.rmSync(path.join(s.work, 'skills', 'hello.sh'));
            fs.symlinkSync('/etc/hostname', path.join(s.work, 'skills', 'hello.sh'));
          },
          /skills\/hello\.sh \(type changed\)/,
        ],
      ];
      for (const [what, change, reason] of attempts) {
        git(s.work, 'reset', '-q', '--hard', baseline);
        change();
        fs.writeFileSync(path.join(s.work, 'harbor-standin-agent.json'), JSON.stringify({ solves: ['*'] }));
        const commit = commitAll(`cheat: ${what}`);
        const r = await post(side.url, '/eval', { split: 'validation', commit });
        expect({ what, status: r.status }).toEqual({ what, status: 422 });
        expect(String(r.json.error)).toMatch(reason);
        expect(String(r.json.error)).toContain('no budget was spent');
        expect(await remaining()).toBe(3);
      }
      expect(side.log()).toMatch(/eval: refused candidate [0-9a-f]{40}: it changes read-only path\(s\)/);
      // A candidate that touches only other files is evaluated.
      git(s.work, 'reset', '-q', '--hard', baseline);
      const honest = commitImprovement(s.work, ['sum-numbers']);
      const ok = await post(side.url, '/eval', { split: 'validation', commit: honest });
      expect(ok.status).toBe(200);
      expect(await remaining()).toBe(2);
      // Even a refused candidate recorded with a better score (a record from before the rule) is never graded.
      git(s.work, 'reset', '-q', '--hard', baseline);
      fs.appendFileSync(path.join(s.work, 'agent.py'), '# tampered\n');
      fs.writeFileSync(path.join(s.work, 'harbor-standin-agent.json'), JSON.stringify({ solves: ['*'] }));
      const tampered = commitAll('tampered');
      expect((await post(side.url, '/eval', { split: 'validation', commit: tampered })).status).toBe(422);
      await side.stop();
      const regFile = path.join(s.cfg.paths.admin_volume, 'candidates.json');
      const reg = JSON.parse(fs.readFileSync(regFile, 'utf8')) as { records: Record<string, unknown>[] };
      reg.records.push({ ...reg.records[0]!, commit: tampered, mean_score: 1, seq: reg.records.length + 1 });
      fs.writeFileSync(regFile, JSON.stringify(reg));
      const again = await startSidecar(s);
      try {
        const fin = await post(again.url, '/finalize', {}, { authorization: `Bearer ${fs.readFileSync(s.cfg.paths.token_path, 'utf8')}` });
        expect(fin.status).toBe(200);
        expect(fin.json.commit).toBe(honest);
        expect(fin.json.refused).toEqual([{ commit: tampered, changes: ['agent.py (modified)'] }]);
      } finally {
        await again.stop();
      }
    } finally {
      await side.stop();
    }
  },
);

test.concurrent('read_only_paths: a submitted candidate that changes one is refused at submit, and floored if it got through', async () => {
  const s = await setup({ reward_mode: 'submit', submit_enabled: true, read_only_paths: ['agent.py'] });
  const side = await startSidecar(s);
  try {
    fs.appendFileSync(path.join(s.work, 'agent.py'), '# tampered\n');
    const tampered = commitImprovement(s.work);
    const r = await post(side.url, '/submit', { commit: tampered });
    expect(r.status).toBe(422);
    expect(String(r.json.error)).toContain('agent.py (modified)');
    expect(fs.existsSync(path.join(s.cfg.paths.admin_volume, 'submission.json'))).toBe(false);
    // A submission file written some other way (say, before the rule) is floored with the reason.
    fs.mkdirSync(s.cfg.paths.admin_volume, { recursive: true });
    fs.writeFileSync(path.join(s.cfg.paths.admin_volume, 'submission.json'), JSON.stringify({ commit: tampered }));
    const fin = await post(side.url, '/finalize', {}, { authorization: `Bearer ${fs.readFileSync(s.cfg.paths.token_path, 'utf8')}` });
    expect(fin.json).toMatchObject({ commit: null, rewards: { reward: 0 } });
    expect(String(fin.json.reason)).toMatch(
      /the submitted candidate [0-9a-f]{40} changes read-only path\(s\) agent\.py \(modified\): floor rewards/,
    );
  } finally {
    await side.stop();
  }
});

test.concurrent(
  'vero serve: SIGTERM is a clean exit that stops its own Temporal server; after a SIGKILL, the next start stops the stale one',
  async () => {
    const s = await setup();
    const pidFile = path.join(s.cfg.paths.home, 'temporal.db.pid');
    const serverPid = () => (JSON.parse(fs.readFileSync(pidFile, 'utf8')) as { pid: number }).pid;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const waitDead = async (pid: number) => {
      for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
      return !alive(pid);
    };
    // Its own dev server (no --address).
    const own = async () => {
      const proc = spawn(VERO, ['serve', '--config', s.serveFile, '--task-queue', s.queue], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
      for (let i = 0; i < 600 && !/listening on \d+/.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(/listening on \d+/);
      return { proc, exited, out: () => out };
    };
    const first = await own();
    const firstServer = serverPid();
    first.proc.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.out()).not.toMatch(/IllegalStateError/);
    expect(await waitDead(firstServer)).toBe(true);

    const second = await own();
    const orphan = serverPid();
    second.proc.kill('SIGKILL');
    await second.exited;
    expect(alive(orphan)).toBe(true); // a detached server survives its owner's SIGKILL…
    const third = await own(); // …and the next start stops it before starting its own
    expect(await waitDead(orphan)).toBe(true);
    expect(serverPid()).not.toBe(orphan);
    const thirdServer = serverPid();
    third.proc.kill('SIGINT');
    expect(await third.exited).toBe(0);
    expect(await waitDead(thirdServer)).toBe(true);
  },
);

test.concurrent('vero serve: SIGTERM with an /eval in flight exits promptly; the client sees the connection close', async () => {
  // Each task takes 30 s: the evaluation is still running when the sidecar is stopped.
  const s = await setup({ timeScale: '1', scenario: { default: { reward: 1, duration_ms: 30_000 } } });
  const side = await startSidecar(s);
  const pending = post(side.url, '/eval', { split: 'train', request_id: 'in-flight-0001' }).then(
    (r) => r,
    (e: Error) => e,
  );
  await until('harbor started', async () => fs.existsSync(path.join(s.dir, 'harbor.jsonl')));
  const t0 = Date.now();
  try {
    expect(await side.stop('SIGTERM')).toBe(0);
    expect(Date.now() - t0).toBeLessThan(20_000); // the sidecar's 5 s drain, not the evaluation's 30 s tasks
    // The connection was closed (fetch fails; no reply): `vero eval` re-sends the same request id.
    expect(await pending).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
  } finally {
    // The harbors it left running for a restarted sidecar to adopt: this test started them, so it stops them.
    for (const line of fs.readFileSync(path.join(s.dir, 'harbor.jsonl'), 'utf8').split('\n').filter(Boolean)) {
      const { event, pid } = JSON.parse(line) as { event: string; pid: number };
      if (event === 'start')
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
    }
  }
});

test.concurrent(
  'mode A is durable and a re-sent request is charged once: the sidecar killed mid-evaluation, the same request id re-sent',
  async () => {
    const { dir, serveFile, hostCfg, work } = await modeASetup();
    const queue = uniqueQueue('mode-a-restart');
    // A slow candidate: inference takes 4 s.
    fs.writeFileSync(path.join(work, 'infer.py'), `import time\ntime.sleep(4)\n${fs.readFileSync(path.join(work, 'infer.py'), 'utf8')}`);
    git(work, 'add', '-A');
    git(work, 'commit', '-q', '-m', 'slow');
    const remaining = async (url: string) =>
      (
        (await (await fetch(`${url}/status`)).json()) as { splits: { split: string; budget: { remaining_run_budget: number } | null }[] }
      ).splits.find((x) => x.split === 'validation')!.budget!.remaining_run_budget;
    const first = await startSidecar({ dir, serveFile, cfg: hostCfg, work, queue });
    const request = { split: 'validation', request_id: 'req-0123456789' };
    const pending = post(first.url, '/eval', request).catch(() => null);
    const modeA = path.join(hostCfg.paths.home, 'mode-a');
    for (let i = 0; i < 300 && !(fs.existsSync(modeA) && fs.readdirSync(modeA).length); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await first.stop('SIGKILL')).toBeNull();
    await pending;
    const second = await startSidecar({ dir, serveFile, cfg: hostCfg, work, queue });
    try {
      expect(await remaining(second.url)).toBe(4); // the reservation was durable
      const again = await post(second.url, '/eval', request);
      expect(again.status).toBe(200);
      expect(again.json.mean_score).toBe(1);
      expect(await remaining(second.url)).toBe(4); // charged once
      expect(fs.readdirSync(modeA)).toHaveLength(1); // one evaluation, resumed by its workflow
      // The same id for another evaluation is refused: a request id is no way to a free evaluation.
      const other = await post(second.url, '/eval', { ...request, num_samples: 5 });
      expect(other.status).toBe(409);
      expect(String(other.json.error)).toContain('was already used for a different evaluation');
      expect(await remaining(second.url)).toBe(4);
    } finally {
      await second.stop();
    }
  },
);

test.concurrent(
  'scoring.error_rate_threshold: an agent evaluation with that share of its tasks dead is not a score (invalid, never shortlisted)',
  async () => {
    const s = await setup({
      scenario: {
        tasks: { 'sum-numbers': { reward_file: 'missing' }, 'reverse-string': { reward_file: 'missing' } },
        default: { reward: 1 },
      },
      build: { scoring: { error_rate_threshold: 0.5 } },
    });
    const side = await startSidecar(s);
    try {
      commitImprovement(s.work);
      // train: 1 of 3 tasks dead, under the threshold: a score, the dead task counted as 0.
      expect((await post(side.url, '/eval', { split: 'train' })).json).toMatchObject({ status: 'completed_with_errors', n_errors: 1 });
      // validation: 1 of 2 dead, at the threshold: no score.
      const v = await post(side.url, '/eval', { split: 'validation' });
      expect(v.json).toMatchObject({
        status: 'invalid',
        invalid_reason: '1 of 2 task(s) have no rewarded trial, at or above scoring.error_rate_threshold 0.5: not a score',
      });
      const fin = await finalizeAsVerifier(side, s);
      expect(fin.json).not.toHaveProperty('shortlist');
      expect(String(fin.json.reason)).toMatch(/^no candidate was evaluated on "validation"/);
    } finally {
      await side.stop();
    }
  },
);

test.concurrent(
  'scoring: an agent evaluation does not retry a dead task (it is the candidate’s failure, counted); the verifier retries it',
  async () => {
    const s = await setup({
      scenario: {
        tasks: {
          'reverse-string': [{ exception: 'RuntimeError' }, { reward: 1 }],
          'add-cli-flag': [{ exception: 'RuntimeError' }, { reward: 1 }],
        },
        default: { reward: 1 },
      },
    });
    s.cfg.mode_b!.harbor.env.HARBOR_STANDIN_STATE_DIR = path.join(s.dir, 'standin-state');
    fs.writeFileSync(s.serveFile, JSON.stringify(s.cfg));
    expect(s.cfg.scoring).toEqual({
      aggregate: 'best',
      reward_key: null,
      agent_task_attempts: 1,
      trusted_task_attempts: 3,
      error_rate_threshold: 1,
    });
    const side = await startSidecar(s);
    try {
      const candidate = commitImprovement(s.work);
      const train = await post(side.url, '/eval', { split: 'train' });
      expect(train.status).toBe(200);
      // reverse-string's only run died: scored 0, not retried into a pass.
      expect(train.json).toMatchObject({ commit: candidate, n_errors: 1, status: 'completed_with_errors', n_trials: 3, n_dead_trials: 1 });
      expect(train.json.mean_score).toBeCloseTo(2 / 3, 12);
      expect((await post(side.url, '/eval', { split: 'validation' })).json).toMatchObject({ mean_score: 1, n_dead_trials: 0 });
      // The verifier's target run of add-cli-flag dies once and is retried: the reward is the candidate's, not 0.
      const token = fs.readFileSync(s.cfg.paths.token_path, 'utf8');
      const fin = await post(side.url, '/finalize', {}, { authorization: `Bearer ${token}` });
      expect(fin.status).toBe(200);
      expect(fin.json).toMatchObject({ commit: candidate, rewards: { reward: 1 } });
      const starts = harborStarts(s).map(taskOf);
      expect(starts.filter((t) => t === 'reverse-string')).toHaveLength(1);
      expect(starts.filter((t) => t === 'add-cli-flag')).toHaveLength(2);
      // The verifier re-scored validation in a run of its own (not the agent's).
      expect(starts.filter((t) => t === 'sum-numbers')).toHaveLength(2);
    } finally {
      await side.stop();
    }
  },
);
